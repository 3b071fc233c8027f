"""Writes tests/fixtures/stateful_rnn/{keras3,tf_keras}: a model of stateful LSTM and GRU layers (fixed
batch of 2) saved in every form, with the outputs of three predict calls in a row: x1, then x2 (the
states carried over from x1), then x2 again after model.reset_states() (from zeros).

The fixture runner predicts once per model, so stateful models have this script of their own.
Usage: .venv/bin/python scripts/make_stateful_fixture.py
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def write(flavour):
    if flavour == "keras3":
        import keras as K
    else:
        import tf_keras as K
    out = os.path.join(ROOT, "tests", "fixtures", "stateful_rnn", flavour)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    L = K.layers
    x = K.Input(batch_shape=(2, 5, 3), name="frames")
    h = L.LSTM(4, stateful=True, return_sequences=True, name="lstm")(x)
    h = L.GRU(3, stateful=True, name="gru")(h)
    model = K.Model(x, L.Dense(2, name="out")(h), name="stateful_rnn")
    rng = np.random.default_rng(16)
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.get_weights()])
    x1 = rng.standard_normal((2, 5, 3)).astype(np.float32)
    x2 = rng.standard_normal((2, 5, 3)).astype(np.float32)
    model.save(os.path.join(out, "model.keras" if flavour == "keras3" else "model.h5"))
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(model.to_json())
    model.save_weights(os.path.join(out, "config.weights.h5" if flavour == "keras3" else "config.h5"))
    model.reset_states() if flavour == "tf_keras" else [l.reset_state() for l in model.layers if hasattr(l, "reset_state")]
    y1 = model.predict(x1, batch_size=2, verbose=0)
    y2 = model.predict(x2, batch_size=2, verbose=0)
    if flavour == "tf_keras":
        model.reset_states()
    else:
        for layer in model.layers:
            if getattr(layer, "stateful", False):
                layer.reset_state()
    y3 = model.predict(x2, batch_size=2, verbose=0)
    # Not input_0.npy / output_0.npy: the one-call fixture tests walk those.
    for name, a in [("x1", x1), ("x2", x2), ("y1", y1), ("y2", y2), ("y3", y3)]:
        np.save(os.path.join(out, name + ".npy"), a)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump({"writer": f"{flavour} {K.__version__}", "case": "stateful_rnn",
                   "notes": "y1 = predict(x1); y2 = predict(x2) with the states carried over; y3 = "
                            "predict(x2) after reset_states()"}, f, indent=1)
    print("wrote", out)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        write(sys.argv[1])
    else:  # each Keras in its own process
        for flavour in ("keras3", "tf_keras"):
            subprocess.run([sys.executable, __file__, flavour], check=True)
