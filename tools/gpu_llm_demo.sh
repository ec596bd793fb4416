#!/usr/bin/env bash
# One hybrid run on the GPU against the scripted endpoint (no model needed): tests/python/llm_server.py --demo
# serves correct rewrites (one faster, one slower), a wrong one for the reviewer to repair, and tuner configs for
# corpus/gelu_scale's kernel; they compete with the built-in candidates through the same four gates.
# Usage: tools/gpu_llm_demo.sh OUT_DIR [ROWS] (default 65536 rows of 256: 64 MiB in, 64 MiB out).
# Env: KERNELOPT, BUDGET (s), DEVICE (cpu: the same run through the interpreter, no timing).
set -u
out=$1 rows=${2:-65536}
kopt=${KERNELOPT:-kernelopt}
cd "$(dirname "$0")/.."
mkdir -p "$out"
sed "s/^ROWS, COLS = 256, 256/ROWS, COLS = $rows, 256/" corpus/gelu_scale/problem.py >"$out/gelu_scale.py"
python3 -u tests/python/llm_server.py --demo >"$out/server.url" 2>"$out/server.log" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$out/server.url" ] && break; sleep 0.1; done
url=$(head -1 "$out/server.url")
printf '[llm]\nprovider = "openai"\nendpoint = "%s"\nmodel = "scripted-demo"\nstream = true\n' "$url" >"$out/llm.toml"
"$kopt" llm check --config "$out/llm.toml" || exit 1
"$kopt" optimize "$out/gelu_scale.py" --device "${DEVICE:-cuda}" --agents hybrid --config "$out/llm.toml" --budget "${BUDGET:-30}" \
    --out "$out/result" -q
rc=$?
[ -f "$out/result/report.json" ] || exit $rc
python3 - "$out/result/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("agents:", r.get("agents"), "| module:", json.dumps(r.get("module", {}))[:300])
for k in r.get("kernels", []):
    print("kernel", k.get("name"), "accepted:", k.get("accepted"), "chosen:", k.get("chosen"))
    for c in k.get("candidates", []):
        if c.get("origin", "").startswith("llm") or c.get("id") == k.get("chosen"):
            print("  ", c.get("id"), c.get("origin"), c.get("outcome"), c.get("failed_gate"), c.get("speedup"))
llm = r.get("llm", {})
print("llm:", {k: llm.get(k) for k in ("exchanges", "http_requests", "input_tokens", "output_tokens", "cost")})
PY
exit $rc
