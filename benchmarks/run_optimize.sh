#!/usr/bin/env bash
# Runs `kernelopt optimize` on each problem file or bundle given and prints one
# summary line per target from its report.json (module speedup through the same
# call path, per-kernel outcome). Usage on the GPU machine:
#   benchmarks/run_optimize.sh OUT_DIR TARGET... (env: KERNELOPT, BUDGET)
set -u
out=$1; shift
kopt=${KERNELOPT:-kernelopt}
mkdir -p "$out"
for t in "$@"; do
  name=$(basename "${t%.py}")
  start=$(date +%s%N)
  "$kopt" optimize "$t" --out "$out/$name" --budget "${BUDGET:-60}" -q >"$out/$name.log" 2>&1
  rc=$?
  secs=$(( ($(date +%s%N) - start) / 1000000000 ))
  python3 - "$out/$name/report.json" "$name" "$rc" "$secs" <<'PY'
import json, sys
path, name, rc, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
try:
    r = json.load(open(path))
except OSError:
    print(f"{name:28} exit {rc}: no report ({secs:.0f} s)")
    sys.exit()
m = r["module"]
ks = []
for k in r["kernels"]:
    floor = k.get("floor_ms")
    base, opt = k.get("baseline_ms"), k.get("optimized_ms") or k.get("baseline_ms")
    above = f" {opt / floor:.2f}x floor" if floor and opt else ""
    how = f"{k['chosen']} ({next(c['description'] for c in k['candidates'] if c['id'] == k['chosen'])})" if k["accepted"] else "fallback"
    ks.append(f"{k['family']}: {base or 0:.4f}->{opt or 0:.4f} ms{above}, {how}")
sp = m.get("speedup")
print(f"{name:28} module {m.get('baseline_ms') or 0:.4f} -> {m.get('optimized_ms') or 0:.4f} ms "
      f"{(sp or 0):.3f}x  [{'; '.join(ks)}]  ({secs:.0f} s total: "
      + ", ".join(f"{s['name']} {s['seconds']:.1f}" for s in r["stages"]) + ")")
PY
done
python3 "$(dirname "$0")/headroom.py" $(for t in "$@"; do echo "$out/$(basename "${t%.py}")"; done)
