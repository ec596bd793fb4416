#!/usr/bin/env bash
# GPU smoke check of kernel-file inputs (docs/inputs.md): capture each small example on the GPU and run
# `kernelopt profile` on the bundle (the module against the original launcher / Helion kernel, and where
# the GPU time goes). Prints one line per example.
# Usage: tools/gpu_kernel_files.sh OUT_DIR ["triton helion"] (env: KERNELOPT)
set -u
out=$1
kopt=${KERNELOPT:-kernelopt}
cd "$(dirname "$0")/.."
kinds=${2:-triton helion}
for f in $(for k in $kinds; do echo examples/$k/*.py; done); do
  case "$f" in *_large.py) continue ;; esac
  kind=$(basename "$(dirname "$f")") name=$(basename "$f" .py)
  b="$out/$kind-$name"
  if ! cap=$(python3 -m kernelopt.worker.capture "$f" --out "$b" --force 2>&1); then
    echo "$kind/$name: capture failed: $cap"; continue
  fi
  prof=$("$kopt" profile "$b" -q 2>&1 | grep -E "baseline module vs|error" | head -1)
  echo "$kind/$name: ${cap##*: } | $prof"
done
