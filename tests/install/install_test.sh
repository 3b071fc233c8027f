#!/usr/bin/env bash
# The installed C++ package, as a project outside the tree uses it: `cmake --install` into a fresh
# prefix, every public header compiled alone against that prefix only (no internal header may leak),
# examples/train_and_save built with find_package(kerascpp) and with pkg-config, and both binaries run
# on the seed model; examples/build_and_train builds, trains and saves a model in code, which real Keras
# (the project's .venv, when there is one) loads and predicts the same.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$build/test_install
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

for h in "$prefix"/include/kerascpp/*.h; do
  echo "#include <kerascpp/$(basename "$h")>" | c++ -std=c++20 -fsyntax-only -I"$prefix/include" -x c++ - ||
    { echo "FAIL: $h does not compile on its own against the installed headers"; exit 1; }
done
echo "ok: $(ls "$prefix"/include/kerascpp/*.h | wc -l) installed headers compile on their own"

model=$src/tests/fixtures/seed_mlp_2x10/keras3/model.keras
cmake -S "$src/examples/train_and_save" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/train_and_save" "$model" "$work/trained_cmake.keras" | tail -2

# pkg-config: the same program with the flags the .pc file gives.
pcdir=$(dirname "$(find "$prefix" -name kerascpp.pc | head -1)")
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs kerascpp)
c++ -O1 "$src/examples/train_and_save/main.cpp" -o "$work/train_and_save_pc" $flags
"$work/train_and_save_pc" "$model" "$work/trained_pc.keras" | tail -1
"$prefix/bin/kerascpp" info "$work/trained_pc.keras" >/dev/null
echo "ok: the installed CLI reads what the example saved"

cmake -S "$src/examples/build_and_train" -B "$work/build_example" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build_example" >/dev/null
"$work/build_example/build_and_train" "$work/built.keras" "$work/built_predictions.txt" | tail -2
if [ -x "$src/.venv/bin/python" ]; then
  "$src/.venv/bin/python" "$src/tests/install/keras_predicts_same.py" "$work/built.keras" "$work/built_predictions.txt"
fi
