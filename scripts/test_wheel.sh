#!/usr/bin/env bash
# The wheel as a user gets it: `pip wheel .` (the same portable baseline as every build), installed into
# a fresh virtual environment (numpy comes from PyPI), checked for instructions an x86-64-v2 CPU lacks,
# and run on the seed snippets, once as it is and once with every fast path capped to the baseline.
# Usage: scripts/test_wheel.sh [BUILD_DIR]   (make test; the wheel's CMake build is kept in BUILD_DIR/wheel)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(mkdir -p "${1:-$root/build}" && cd "${1:-$root/build}" && pwd)
out=$build/wheel_test
rm -rf "$out"
mkdir -p "$out"
cd "$root"
# --no-build-isolation: the build tools already in .venv (scikit-build-core, nanobind), so that the
# compile commands equal make test's and ccache serves them.
.venv/bin/pip wheel . -q --no-build-isolation --no-deps -w "$out/dist" -C build-dir="$build/wheel"
wheel=$(ls "$out"/dist/kerascpp-*.whl)
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
python3 -m venv "$out/venv"
"$out/venv/bin/pip" install -q "$wheel"
tests/check_portable_binary.sh "$out"/venv/lib/python3*/site-packages/kerascpp/_kerascpp*.so
cd "$out"  # away from the source tree: the installed package alone
env -u PYTHONPATH "$out/venv/bin/python" "$root/tests/wheel/seed_snippets.py" "$root/tests/fixtures/seed_mlp_2x10"
env -u PYTHONPATH KERASCPP_MAX_ISA=baseline ONEDNN_MAX_CPU_ISA=SSE41 \
    "$out/venv/bin/python" "$root/tests/wheel/seed_snippets.py" "$root/tests/fixtures/seed_mlp_2x10"
