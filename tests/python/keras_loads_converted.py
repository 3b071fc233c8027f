"""Loads every model file that `kerascpp convert` wrote under DIR with real Keras and compares its
predictions with the fixture's outputs (Keras's own). Keras 3 reads the Keras 3 forms (k3.keras,
k3.h5, k3cfg.json + k3cfg.weights.h5); with --tf-keras, tf_keras reads the Keras 2 forms (k2.h5,
k2cfg.json + k2cfg.h5). Prints one line per file and exits 1 if any fails.

The fixture's outputs were computed by TensorFlow on the machine that wrote the fixtures; TensorFlow
here computes them with this machine's round-off, so the bound is the one every fixture check uses
(tests/python/fixture_tolerance.py: 1e-5 of each output's scale unless meta.json says more, and why).
A wrongly written weight or config moves outputs by far more. Exactness of the weights themselves is
checked by the C++ round-trip tests.

    python tests/python/keras_loads_converted.py DIR [--tf-keras] [--tol 1e-5]
"""
import argparse
import glob
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402

import fixture_tolerance  # noqa: E402


def numbered(d, prefix):
    out, i = [], 0
    while os.path.exists(f"{d}/{prefix}{i}.npy"):
        out.append(np.load(f"{d}/{prefix}{i}.npy"))
        i += 1
    return out


def keras3_cannot_read_own_h5(d):
    """True when the fixture's Keras 3 writer could not load its own model.h5 (meta.json records it:
    e.g. keras.applications' LayerScale or keras.ops nodes, which only .keras files resolve)."""
    import json
    meta = os.path.join(d, "meta.json")
    if not os.path.exists(meta):
        return False
    with open(meta) as f:
        m = json.load(f)
    return m.get("writer", "").startswith("keras ") and any(
        s.get("what") == "load model.h5" for s in m.get("skipped", []))


def meta_of(d):
    import json
    meta = os.path.join(d, "meta.json")
    if not os.path.exists(meta):
        return {}
    with open(meta) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--tf-keras", action="store_true")
    p.add_argument("--tol", type=float, default=fixture_tolerance.DEFAULT, help="of each output's scale")
    a = p.parse_args()
    if a.tf_keras:
        import tf_keras as keras
        forms = [("k2.h5", None), ("k2cfg.json", "k2cfg.h5")]
    else:
        import keras
        forms = [("k3.keras", None), ("k3.h5", None), ("k3cfg.json", "k3cfg.weights.h5")]
    failed = passed = 0
    for d in sorted(os.path.dirname(f) for f in glob.glob(f"{a.dir}/**/input_0.npy", recursive=True)):
        x, want = numbered(d, "input_"), numbered(d, "output_")
        for model_file, weights in forms:
            path = os.path.join(d, model_file)
            if not os.path.exists(path):
                continue  # that dialect cannot express this model; convert refused it
            want_here = want
            if os.path.exists(path + ".differs"):  # that Keras computes the model otherwise (RandomCrop)
                print(f"skip {path} (written with a warning that this Keras computes it otherwise)")
                continue
            if os.path.exists(path + ".warned"):  # the other Keras computes masked values otherwise
                want_here = numbered(d, "other_output_")
                if not want_here:
                    print(f"skip {path} (written with a warning that masked values differ; no outputs of that Keras)")
                    continue
            if model_file == "k3.h5" and keras3_cannot_read_own_h5(d):
                print(f"skip {path} (Keras 3 cannot load this model from its own .h5 either)")
                continue
            try:
                if weights:
                    with open(path) as f:
                        m = keras.models.model_from_json(f.read())
                    m.load_weights(os.path.join(d, weights))
                else:
                    # Compiled where the training config came along; Keras 3 cannot compile from its own
                    # legacy .h5 training configs (it fails on 'keras.metrics.mse'), so not for k3.h5.
                    m = keras.models.load_model(path, compile=model_file != "k3.h5")
                if meta_of(d).get("jit_compile"):  # channels_first: TensorFlow's CPU kernels lack NCHW, XLA has it
                    m.jit_compile = True
                got = m.predict(x if len(x) > 1 else x[0], verbose=0)
                if isinstance(got, dict):
                    got = [got[k] for k in sorted(got)]
                got = got if isinstance(got, (list, tuple)) else [got]
                bounds = fixture_tolerance.bounds(d, len(want_here), a.tol)
                errs = [fixture_tolerance.worst(g, w) for g, w in zip(got, want_here)]
                err = f"{max(errs):.3g} of the output's scale"
                ok = len(got) == len(want_here) and all(e <= b for e, b in zip(errs, bounds))
            except Exception as e:  # noqa: BLE001 - report every failure, go on
                ok, err = False, f"{type(e).__name__}: {str(e)[:300]}"
            print(f"{'ok  ' if ok else 'FAIL'} {path} {err}")
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
