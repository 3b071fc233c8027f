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
# convert SRC DST [--keras2]: DST.skipped holds the refusal; DST.warned the warning that the target
# Keras computes masked values otherwise; DST.differs that it computes the model otherwise (RandomCrop at
# inference), so that no outputs of the writer's stand for it.
convert() {
  if "$build"/kerascpp convert "$@" >/dev/null 2>"$2.skipped"; then
    if grep -q "computes masked values" "$2.skipped"; then mv "$2.skipped" "$2.warned"
    elif grep -q "otherwise than the Keras it was read from" "$2.skipped"; then mv "$2.skipped" "$2.differs"
    else rm "$2.skipped"; fi
  fi
  return 0
}
for d in $(find tests/fixtures -name input_0.npy -printf '%h\n' | sort); do
  o="$out/$(echo "${d#tests/fixtures/}" | tr / _)"
  mkdir -p "$o"
  cp "$d"/input_*.npy "$d"/output_*.npy "$d"/meta.json "$o"/
  src=$(ls "$d"/model.keras "$d"/model.h5 2>/dev/null | head -1 || true)
  for t in k3.keras k3.h5 k3cfg.json; do convert "$src" "$o/$t"; done
  for t in k2.h5 k2cfg.json; do convert "$src" "$o/$t" --keras2; done
  # Written for the other Keras, which computes masked values otherwise (convert warned): that Keras's
  # own outputs for the same model, weights and inputs are the other writer's fixture.
  other=$(dirname "$d")/$([ "$(basename "$d")" = keras3 ] && echo tf_keras || echo keras3)
  if ls "$o"/*.warned >/dev/null 2>&1 && [ -d "$other" ]; then
    for f in "$other"/output_*.npy; do cp "$f" "$o/other_$(basename "$f")"; done
  fi
done
