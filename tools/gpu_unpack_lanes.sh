#!/usr/bin/env bash
# After a `tools/gpu_bench_lanes.sh` call: unpack the lanes' archives (files_at/laneI.tgz) into .gpu-state/, so
# the next call resumes where this one stopped (without it the lanes run their finished problems again), and
# print each run's progress. Usage: tools/gpu_unpack_lanes.sh FILES_AT
set -eu
from=${1:?usage: tools/gpu_unpack_lanes.sh FILES_AT (the folder the device call brought laneI.tgz back into)}
cd "$(dirname "$0")/.."
found=0
for t in "$from"/lane*.tgz; do
  [ -e "$t" ] || continue
  found=1
  mkdir -p .gpu-state
  tar xzf "$t" -C .gpu-state
done
[ $found = 1 ] || { echo "gpu_unpack_lanes: no lane*.tgz in $from; pass the call's files_at folder" >&2; exit 1; }
for r in .gpu-state/*/results.jsonl; do
  echo "$(dirname "$r"): $(wc -l < "$r") problem(s) done"
done
