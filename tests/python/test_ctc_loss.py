"""keras.losses.CTC in fit: a small sequence labeller (logits per time step, labels padded with the
blank 0) trained in kerascpp and in real Keras 3 (its own process) from the same weights and data;
per-epoch losses and evaluate() must agree, so the loss and its gradient are Keras's. And the shapes
CTC refuses, by name."""

import numpy as np
import pytest

import keras_reference
import kerascpp as keras

CASES = r"""
import numpy as np

def run_all(keras, save_to=None):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(12, 8, 4)).astype("float32")
    y = rng.integers(1, 5, size=(12, 3)).astype("int32")
    y[::3, 2] = 0      # shorter labels, padded with the blank
    y[5] = [2, 2, 0]   # a repeat needs a blank between
    w = rng.uniform(0.3, 2.0, size=(12,)).astype("float32")
    out = {}
    for name, loss in (("class", keras.losses.CTC()), ("name", "ctc")):
        inp = keras.Input((8, 4))
        h = keras.layers.Dense(6, activation="tanh")(inp)
        model = keras.Model(inp, keras.layers.Dense(5)(h))
        r = np.random.default_rng(9)
        model.set_weights([r.normal(scale=0.5, size=v.shape).astype("float32") for v in model.get_weights()])
        model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss)
        h = model.fit(x, y, sample_weight=w if name == "class" else None, batch_size=4, epochs=3, shuffle=False,
                      verbose=0)
        out[name] = {"loss": [float(v) for v in h.history["loss"]],
                     "evaluate": float(model.evaluate(x, y, batch_size=4, verbose=0))}
        if save_to and name == "class":  # the file, and Keras's own continuation of it
            model.save(save_to)
            more = model.fit(x, y, sample_weight=w, batch_size=4, epochs=2, shuffle=False, verbose=0)
            out["continued"] = [float(v) for v in more.history["loss"]]
    out["data"] = {"x": x.tolist(), "y": y.tolist(), "w": w.tolist()}
    return out
"""

KERAS_REFERENCE = CASES + r"""
import json, sys
import keras
print("RESULT" + json.dumps(run_all(keras, sys.argv[1])))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    scope = {}
    exec(CASES, scope)
    path = tmp_path_factory.mktemp("ctc") / "ctc.keras"
    return keras_reference.run(KERAS_REFERENCE, path), scope["run_all"](keras), path


@pytest.mark.parametrize("name", ["class", "name"])
def test_ctc_trains_as_keras(runs, name):
    ref, mine = runs[0][name], runs[1][name]
    # tf.nn.ctc_loss runs its recursion in float32, kerascpp in float64: 1e-4 relative over 3 epochs.
    np.testing.assert_allclose(mine["loss"], ref["loss"], rtol=1e-4)
    np.testing.assert_allclose(mine["evaluate"], ref["evaluate"], rtol=1e-4)


def test_a_keras_file_compiled_with_ctc_resumes_as_keras(runs):
    ref, _, path = runs
    model = keras.models.load_model(str(path))
    data = ref["data"]
    x, y, w = (np.array(data[k], dtype) for k, dtype in (("x", "float32"), ("y", "int32"), ("w", "float32")))
    h = model.fit(x, y, sample_weight=w, batch_size=4, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(h.history["loss"], ref["continued"], rtol=1e-4)  # with Adam's state


def test_ctc_refuses_shapes_by_name():
    loss = keras.losses.CTC()
    with pytest.raises(ValueError, match=r"Targets `y_true` are expected to be a tensor of shape"):
        loss(np.ones((2, 3, 1), "float32"), np.zeros((2, 4, 5), "float32"))
    with pytest.raises(ValueError, match=r"Logits `y_pred` are expected"):
        loss(np.ones((2, 3), "float32"), np.zeros((2, 5), "float32"))
    with pytest.raises(ValueError, match=r"sample 1 has the label 7 at position 0, outside \[0, 5\)"):
        loss(np.array([[1, 2], [7, 0]], "float32"), np.zeros((2, 4, 5), "float32"))
    with pytest.raises(ValueError, match=r"sample 0 has the blank 0 at position 1 .*padded with 0 at the end"):
        loss(np.array([[1, 0, 3, 0]], "float32"), np.zeros((1, 4, 5), "float32"))
    with pytest.raises(ValueError, match=r"y_pred has no classes"):
        loss(np.array([[1]], "float32"), np.zeros((1, 4, 0), "float32"))


def test_a_label_no_alignment_can_produce_costs_what_tensorflow_charges():
    # tf.nn.ctc_loss lets a path end in any state at a cost of log(1e-307): about 707 plus the paths'
    # cost, finite (these values are Keras 3.15 on TensorFlow 2.21), so fit goes on as in Keras.
    loss = keras.losses.CTC()
    np.testing.assert_allclose(float(loss(np.array([[1, 2, 3]], "float32"), np.zeros((1, 2, 5), "float32"))),
                               708.5030517578125, rtol=1e-6)
    np.testing.assert_allclose(float(loss(np.array([[1, 1]], "float32"), np.zeros((1, 2, 5), "float32"))),
                               708.72607421875, rtol=1e-6)
