#!/usr/bin/env bash
# One command from a fresh Debian machine (no GPU) to a built, installed kernelopt:
# system packages, pinned Python packages, the C++ engine (and its fuzzer), and
# `kernelopt` on PATH. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if ! dpkg -s nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev libcurl4-openssl-dev \
     libtomlplusplus-dev chromium >/dev/null 2>&1 \
   || ! command -v clang++ >/dev/null || ! command -v ninja >/dev/null; then
  echo "[setup] installing Debian packages"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    build-essential cmake ninja-build pkg-config clang \
    nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev libxxhash-dev \
    libgtest-dev libgmock-dev libbenchmark-dev libcurl4-openssl-dev libtomlplusplus-dev \
    chromium >/dev/null  # chromium: tests/python/test_report_html.py renders report.html headless
fi

PY=${PYTHON:-python3}
echo "[setup] installing Python packages (requirements-ci.txt, then kernelopt in editable mode)"
$PY -m pip install -q -r requirements-ci.txt
# Editable: the Python package from python/ alone, no CMake build (pyproject.toml's override; the engine is built
# below); the build backend is requirements-ci.txt's scikit-build-core.
$PY -m pip install -q --no-deps --no-build-isolation -e .

echo "[setup] building the engine"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
echo "[setup] building the parser fuzzer (clang, libFuzzer + ASan/UBSan)"
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DKOPT_FUZZ=ON -DKOPT_BENCH=OFF >/dev/null
cmake --build build/fuzz --target parse_fuzz
$SUDO cmake --install build --prefix /usr/local >/dev/null
echo "[setup] done: $(command -v kernelopt) ($(kernelopt --version))"
