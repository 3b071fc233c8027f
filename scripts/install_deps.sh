#!/usr/bin/env bash
# Installs what kerascpp needs on a fresh Debian machine, skipping what is already there:
# Debian packages with apt-get (ccache: the wheel test rebuilds what make test compiled), and the Python test/benchmark dependencies into .venv.
# Usage: scripts/install_deps.sh [--python | --fuzz]   (--python also sets up .venv with real Keras;
# --fuzz adds clang and libFuzzer)
set -euo pipefail
cd "$(dirname "$0")/.."

# libgloo-dev: data-parallel training's collectives (Gloo's TCP transport).
# libopenblas-openmp-dev: OpenBLAS on OpenMP's threads, the pool oneDNN and kerascpp's own loops run on
# (CMakeLists.txt links it when present; the default pthreads OpenBLAS keeps a pool of its own).
DEBS=(build-essential cmake pkg-config libhdf5-dev nlohmann-json3-dev zlib1g-dev libopenblas-dev libopenblas-openmp-dev
      libdnnl-dev libgloo-dev libeigen3-dev libgtest-dev libbenchmark-dev python3-venv ccache)
# make fuzz: clang with libFuzzer's runtime, and unzip for the seeds.
[ "${1:-}" = "--fuzz" ] && DEBS+=(clang libclang-rt-dev unzip)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "Installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = "--python" ]; then
  PY=${PYTHON:-python3}
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  if ! .venv/bin/python -c "import numpy, h5py, pytest, keras, tf_keras, tensorflow, tensorboard, nanobind, scikit_build_core, matplotlib, onnx, onnxruntime, tf2onnx, importlib.util as u; assert u.find_spec('keras_facenet')" 2>/dev/null; then
    echo "Installing Python packages into .venv (real Keras is a test and benchmark dependency only)"
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -r scripts/requirements-test.txt
  fi
fi
