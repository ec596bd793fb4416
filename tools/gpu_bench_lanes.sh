#!/usr/bin/env bash
# One GPU-machine call (docs/scaling.md): two lanes of `kernelopt bench` over the suite, shard 0/2 on GPU 0 and
# 1/2 on GPU 1. SPECS lists runs as TAG:LEVELS (default "b:1,2,3"); a lane goes through them in order while time
# is left, each resuming from .gpu-state/TAGI/{run.json,results.jsonl} (what the previous call brought back,
# unpacked here), so a suite longer than one call runs over several. Each lane's state, logs, the problems'
# report.json files and module sources come back as $OUT/laneI.tgz (unpack into .gpu-state/ for the next call). EXTRA0 and
# EXTRA1 (commands) run on GPU 0 / GPU 1 before that GPU's lane. The engine (Release build) and its shared libraries travel in .gpu-bin/, wheels
# in .whl/. Env: LIMIT (s for the whole call), BUDGET (s per problem), SPECS, NO_LANE1 (EXTRA1 only), VERBOSE
# (the jobs' own progress lines, with seconds, in the lanes' logs), LANES=1 (a one-GPU machine: one lane, the
# whole suite on GPU 0; its state is still TAG0), SUITE (default benchmarks/suite; benchmarks/large for the
# large tier, docs/memory.md). BENCH_FLAGS: more `kernelopt bench` flags; by default `--capture-jobs 0` (each job
# captures its own problem): bench's capture-ahead captures every problem of the suite before the first job, which
# in one call of 9 minutes left 3 of 60 problems run (session 25).
set -u
LIMIT=${LIMIT:-570}
if ls .whl/*.whl >/dev/null 2>&1; then  # wheels are optional (helion for its kernel files)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD/python LD_LIBRARY_PATH=$PWD/.gpu-bin KERNELOPT_BIN=$PWD/.gpu-bin/kernelopt \
       KERNELOPT=$PWD/.gpu-bin/kernelopt PYTHONUNBUFFERED=1 PATH=$PWD/.gpu-bin:$PATH
ldconfig -p | grep -q libcurl.so.4 || export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.gpu-bin/curl
T0=$(date +%s) SPECS=${SPECS:-b:1,2,3} LANES=${LANES:-2}
left() { echo $(( ${1} - ($(date +%s) - T0) )); }
lane() {  # GPU shard
  local g=$1 s=$2 st=/tmp/lane$2 spec T L d
  mkdir -p $st
  for spec in $SPECS; do
    T=${spec%%:*} L=${spec#*:} d=$st/${spec%%:*}$s
    mkdir -p $d; cp .gpu-state/$T$s/run.json .gpu-state/$T$s/results.jsonl $d/ 2>/dev/null
    [ "$(left $LIMIT)" -gt 90 ] || break
    CUDA_VISIBLE_DEVICES=$g KERNELOPT_DB=/tmp/k$g.db timeout -k 5 $(left $((LIMIT-25))) .gpu-bin/kernelopt bench \
        ${SUITE:-benchmarks/suite} --levels $L --shard $s/$LANES --gpus 0 --budget-per-problem ${BUDGET:-20} --out $d \
        ${VERBOSE:+--verbose} ${BENCH_FLAGS---capture-jobs 0} >$d/bench.log 2>&1
    echo "bench $T$s rc=$?" >>$d/bench.log
  done
  # The captured and optimized module sources come back too (text, a few MB in all): a kernel's source is
  # what explains a template's or rewrite's decline (report.json `declined`).
  (cd $st && tar czf $OUT/lane$s.tgz --exclude=problem.py --exclude='*.html' --exclude='*.md' .)
}
( if [ -n "${EXTRA0:-}" ]; then CUDA_VISIBLE_DEVICES=0 KERNELOPT_DB=/tmp/ke0.db bash -c "$EXTRA0" >$OUT/extra0.log 2>&1; fi
  lane 0 0 ) &
( if [ -n "${EXTRA1:-}" ]; then CUDA_VISIBLE_DEVICES=1 KERNELOPT_DB=/tmp/ke.db bash -c "$EXTRA1" >$OUT/extra.log 2>&1; fi
  [ -z "${NO_LANE1:-}" ] && [ "$LANES" = 2 ] && lane 1 1 ) &
wait
for x in extra0 extra; do echo "=== $x"; cut -c1-400 $OUT/$x.log 2>/dev/null | tail -60; done
for f in /tmp/lane*/*/bench.log; do echo "=== $f"; grep -E "^\[bench [0-9].*(x over|error)|rc=" $f | cut -c1-200; done
