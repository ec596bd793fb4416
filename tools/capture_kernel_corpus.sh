#!/bin/sh
# Capture the small kernel-file examples (docs/inputs.md) into corpus/triton/ and corpus/helion/ in
# CPU mode (Triton's interpreter). Helion files need helion importable (PYTHONPATH or pip).
set -e
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1 PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
for kind in triton helion; do
  for f in examples/$kind/*.py; do
    case "$f" in *_large.py) continue ;; esac
    name=$(basename "$f" .py)
    python3 -m kernelopt.worker.capture "$f" --out "corpus/$kind/$name" --device cpu --force
  done
done
