#!/usr/bin/env bash
# The wheel as a user gets it: `pip wheel .` (the same portable baseline as every build), installed into
# a fresh virtual environment (numpy comes from PyPI, through pip's cache), checked for instructions an
# x86-64-v2 CPU lacks, and run on the seed snippets, once as it is and once with every fast path capped
# to the baseline.
# Usage: scripts/test_wheel.sh [BUILD_DIR]   (make test; the wheel's CMake build is kept in BUILD_DIR/wheel)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(mkdir -p "${1:-$root/build}" && cd "${1:-$root/build}" && pwd)
out=$build/wheel_test
rm -rf "$out"
mkdir -p "$out"
cd "$root"
# --no-build-isolation: the build tools already in .venv (scikit-build-core, nanobind), and the
# compilers make test's build uses (scikit-build-core's CMake would pick g++ where make test's picked
# c++), so that the compile commands equal make test's and ccache serves them.
compiler() { sed -n "s/^CMAKE_$1_COMPILER:[A-Z]*=//p" "${2:-$build}/CMakeCache.txt" 2>/dev/null; }
# A wheel build made with other compilers is started afresh: CMake would drop the cache and with it
# the definitions scikit-build-core passed.
if [ -f "$build/wheel/CMakeCache.txt" ] && [ "$(compiler CXX "$build/wheel")" != "$(compiler CXX)" ]; then
  rm -rf "$build/wheel"
fi
defines=()
[ -n "$(compiler CXX)" ] && defines+=(-C "cmake.define.CMAKE_CXX_COMPILER=$(compiler CXX)")
[ -n "$(compiler C)" ] && defines+=(-C "cmake.define.CMAKE_C_COMPILER=$(compiler C)")
.venv/bin/pip wheel . -q --no-build-isolation --no-deps -w "$out/dist" -C build-dir="$build/wheel" "${defines[@]}"
wheel=$(ls "$out"/dist/kerascpp-*.whl)
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$root/.venv/bin/python" -m venv "$out/venv"  # the base interpreter of .venv: the wheel's Python
"$out/venv/bin/pip" install -q "$wheel"
if [ "$(uname -m)" = x86_64 ]; then
  tests/check_portable_binary.sh "$out"/venv/lib/python3*/site-packages/kerascpp/_kerascpp*.so
fi
cd "$out"  # away from the source tree: the installed package alone
env -u PYTHONPATH "$out/venv/bin/python" "$root/tests/wheel/seed_snippets.py" "$root/tests/fixtures/seed_mlp_2x10"
env -u PYTHONPATH KERASCPP_MAX_ISA=baseline ONEDNN_MAX_CPU_ISA=SSE41 \
    "$out/venv/bin/python" "$root/tests/wheel/seed_snippets.py" "$root/tests/fixtures/seed_mlp_2x10"
