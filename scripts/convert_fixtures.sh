#!/usr/bin/env bash
# Converts every fixture under tests/fixtures with `kerascpp convert` into OUT/<case>_<writer>/, in the
# Keras 3 forms (k3.keras, k3.h5, k3cfg.json + k3cfg.weights.h5) and the Keras 2 forms (k2.h5,
# k2cfg.json + k2cfg.h5), with the fixture's inputs and Keras's outputs beside them. A form that the
# target dialect cannot express (Keras 2's hard_sigmoid in Keras 3, and the reverse) is skipped.
# Usage: scripts/convert_fixtures.sh BUILD_DIR OUT
set -euo pipefail
build=$1 out=$2
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
for d in $(find tests/fixtures -name input_0.npy -printf '%h\n' | sort); do
  o="$out/$(echo "${d#tests/fixtures/}" | tr / _)"
  mkdir -p "$o"
  cp "$d"/input_*.npy "$d"/output_*.npy "$d"/meta.json "$o"/
  src=$(ls "$d"/model.keras "$d"/model.h5 2>/dev/null | head -1 || true)
  for t in k3.keras k3.h5 k3cfg.json; do "$build"/kerascpp convert "$src" "$o/$t" >/dev/null 2>"$o/$t.skipped" && rm "$o/$t.skipped" || true; done
  for t in k2.h5 k2cfg.json; do "$build"/kerascpp convert "$src" "$o/$t" --keras2 >/dev/null 2>"$o/$t.skipped" && rm "$o/$t.skipped" || true; done
done
