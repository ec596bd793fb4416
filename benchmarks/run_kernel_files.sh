#!/usr/bin/env bash
# The realistic kernel-file examples on the GPU machine (docs/inputs.md): optimize each (capture on the
# GPU included), then time the original launcher / Helion kernel against the captured baseline module and
# the optimized result. Usage: benchmarks/run_kernel_files.sh OUT_DIR triton|helion [FILE...]
# (default: every examples/KIND/*_large.py)
# (env: KERNELOPT, BUDGET; Helion files autotune with KERNELOPT_HELION_AUTOTUNE=1, effort "quick").
set -u
out=$1 kind=$2
shift 2
cd "$(dirname "$0")/.."
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(examples/"$kind"/*_large.py)
if [ "$kind" = helion ]; then export KERNELOPT_HELION_AUTOTUNE=${KERNELOPT_HELION_AUTOTUNE:-1}; fi
benchmarks/run_optimize.sh "$out" "${files[@]}"
python3 benchmarks/kernel_files.py "$out" "${files[@]}"
