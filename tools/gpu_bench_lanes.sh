#!/usr/bin/env bash
# One GPU-machine call (docs/scaling.md): two lanes of `kernelopt bench` over the suite, shard 0/2 on GPU 0 and
# 1/2 on GPU 1, each resuming from .gpu-state/bI/{run.json,results.jsonl} (what the previous call left in $OUT,
# copied back here), so a suite longer than one call runs over several. EXTRA1 (a command) runs on GPU 1 before
# its bench lane. The engine (Release build) and the shared libraries it needs travel in .gpu-bin/, wheels in .whl/.
# Env: LIMIT (s for the whole call), BUDGET (s per problem), LANE0_SHARD, NO_LANE1 (lane 1 runs EXTRA1 only).
set -u
LIMIT=${LIMIT:-570}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/python LD_LIBRARY_PATH=$PWD/.gpu-bin KERNELOPT_BIN=$PWD/.gpu-bin/kernelopt \
       KERNELOPT=$PWD/.gpu-bin/kernelopt PYTHONUNBUFFERED=1 PATH=$PWD/.gpu-bin:$PATH
ldconfig -p | grep -q libcurl.so.4 || export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.gpu-bin/curl
T0=$(date +%s)
left() { echo $(( ${1} - ($(date +%s) - T0) )); }
lane() {  # GPU shard
  local g=$1 s=$2 d=/tmp/b$2
  mkdir -p $d; cp .gpu-state/b$s/run.json .gpu-state/b$s/results.jsonl $d/ 2>/dev/null
  CUDA_VISIBLE_DEVICES=$g KERNELOPT_DB=/tmp/k$g.db timeout -k 5 $(left $((LIMIT-15))) .gpu-bin/kernelopt bench \
      benchmarks/suite --levels 1,2,3 --shard $s/2 --gpus 0 --budget-per-problem ${BUDGET:-20} --out $d \
      >$OUT/b${s}.log 2>&1
  echo "bench $s rc=$?" >>$OUT/b${s}.log
  cp $d/run.json $OUT/b${s}_run.json; cp $d/results.jsonl $OUT/b${s}_results.jsonl
}
lane 0 ${LANE0_SHARD:-0} &
( if [ -n "${EXTRA1:-}" ]; then CUDA_VISIBLE_DEVICES=1 KERNELOPT_DB=/tmp/ke.db bash -c "$EXTRA1" >$OUT/extra.log 2>&1; fi
  [ -z "${NO_LANE1:-}" ] && [ "$(left $LIMIT)" -gt 90 ] && lane 1 1 ) &
wait
echo "=== extra"; cut -c1-400 $OUT/extra.log 2>/dev/null | tail -60
for s in 0 1; do echo "=== lane $s"; grep -E "^\[bench [0-9].*(x over|error)|rc=" $OUT/b$s.log | cut -c1-200; done
