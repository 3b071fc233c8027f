"""Models built in code with `import kerascpp as keras`, held to real Keras 3: the tutorial scripts of
tests/python/tutorials run unchanged and Keras loads what they saved and predicts the same; layers
made with the same arguments have Keras's config; a functional graph has Keras's layer order and
node indices; keras.utils gives Keras's arrays; and the errors are Keras's kind, naming what is wrong.
Keras runs once, in its own process (KERAS_CHECK below), over what this process wrote.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kerascpp as keras

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TUTORIALS = os.path.join(ROOT, "tests", "python", "tutorials")
SAVED = {"mlp.py": ["mlp.keras"], "functional_cnn.py": ["cnn.keras", "cnn.h5"], "transfer.py": ["transfer.keras"],
         "text_classifier.py": ["text.keras"]}

# (class, positional arguments, keyword arguments): each layer's get_config() must be Keras's.
CONFIG_CASES = [
    ("Dense", [16], {"activation": "relu"}),
    ("Dense", [4], {"use_bias": False, "kernel_initializer": "he_normal", "kernel_regularizer": "l2"}),
    ("Conv2D", [8, 3], {"strides": 2, "padding": "same", "kernel_constraint": "max_norm"}),
    ("Conv1D", [4, 5], {"dilation_rate": 2}),
    ("MaxPooling2D", [], {"pool_size": 3}),
    ("MaxPooling2D", [2], {"strides": None}),
    ("AveragePooling1D", [4], {}),
    ("ZeroPadding2D", [(1, 2)], {}),
    ("LSTM", [8], {"return_sequences": True}),
    ("LSTMCell", [5], {"recurrent_dropout": 0.1}),
    ("GRU", [4], {"reset_after": False}),
    ("Embedding", [100, 8], {"mask_zero": True}),
    ("Dropout", [0.3], {}),
    ("BatchNormalization", [], {"momentum": 0.9}),
    ("MultiHeadAttention", [2, 4], {}),
    ("Concatenate", [], {"axis": 1}),
    ("Activation", ["tanh"], {}),
    ("Reshape", [(2, 8)], {}),
    ("LayerNormalization", [], {"epsilon": 1e-5}),
    ("SeparableConv2D", [4, (3, 3)], {"depth_multiplier": 2}),
]

KERAS_CHECK = r'''
import json, os, sys
import numpy as np
import keras
out_dir, cases = sys.argv[1], json.loads(sys.argv[2])
result = {"predictions": {}, "configs": [], "graph": None, "utils": {}}
for name in cases["saved"]:
    stem = name.split(".")[0]
    model = keras.models.load_model(os.path.join(out_dir, name))
    xs = [np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir)) if f.startswith(stem + "_x")]
    got = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
    want = np.load(os.path.join(out_dir, stem + "_y.npy"))
    result["predictions"][name] = [float(np.abs(got - want).max()), float(np.abs(want).max())]
for cls, args, kwargs in cases["configs"]:
    c = getattr(keras.layers, cls)(*args, **kwargs).get_config()
    c.pop("name")
    result["configs"].append(c)
exec(cases["graph"])
result["graph"] = graph(keras).get_config()
result["utils"] = {"categorical": keras.utils.to_categorical([[1], [0], [3]], 5).tolist(),
                   "padded": keras.utils.pad_sequences([[1, 2, 3], [4], []], maxlen=2, padding="post").tolist(),
                   "normalized": keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()}
print("RESULT" + json.dumps(result))
'''

# One functional graph, built the same way by both: shared layers, two inputs, a branch.
GRAPH = '''
def graph(keras):
    a = keras.Input(shape=(4,), name="a")
    b = keras.Input(shape=(4,), name="b")
    shared = keras.layers.Dense(3, name="shared")
    left = keras.layers.Dense(3, name="left")(shared(a))
    right = shared(b)
    joined = keras.layers.Concatenate(name="joined")([left, right, keras.layers.Dense(3, name="direct")(a)])
    return keras.Model(inputs=[a, b], outputs=[keras.layers.Dense(1, name="out")(joined), right], name="graph")
'''


@pytest.fixture(scope="module")
def keras_view(tmp_path_factory):
    out = tmp_path_factory.mktemp("built")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    for script in SAVED:
        r = subprocess.run([sys.executable, os.path.join(TUTORIALS, script), str(out)], env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{script} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    cases = {"saved": [f for files in SAVED.values() for f in files], "configs": CONFIG_CASES, "graph": GRAPH}
    r = subprocess.run([sys.executable, "-c", KERAS_CHECK, str(out), json.dumps(cases)], capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    assert r.returncode == 0 and lines, r.stderr[-3000:]
    return json.loads(lines[0][6:])


def test_tutorial_scripts_save_models_keras_loads_and_predicts_the_same(keras_view):
    assert sorted(keras_view["predictions"]) == sorted(f for files in SAVED.values() for f in files)
    for name, (diff, scale) in keras_view["predictions"].items():
        # The same float32 weights on another engine: round-off only, scaled to the outputs' magnitude
        # (oneDNN and kerascpp's kernels sum in different orders).
        assert diff <= 1e-5 * max(1.0, scale), (name, diff, scale)


def test_layers_have_keras_config_for_the_same_arguments(keras_view):
    for (cls, args, kwargs), want in zip(CONFIG_CASES, keras_view["configs"]):
        got = json.loads(json.dumps(getattr(keras.layers, cls)(*args, **kwargs).get_config()))
        got.pop("name")
        assert got == want, (cls, {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)})


def test_a_functional_graph_has_keras_layer_order_and_nodes(keras_view):
    namespace = {}
    exec(GRAPH, namespace)
    got = namespace["graph"](keras).get_config()
    want = keras_view["graph"]

    def calls(config):
        return [(l["name"], [[t["config"]["keras_history"] for t in node["args"][0]] if isinstance(node["args"][0], list)
                             else node["args"][0]["config"]["keras_history"] for node in l["inbound_nodes"]])
                for l in config["layers"]]

    assert calls(got) == calls(want)
    assert got["input_layers"] == want["input_layers"] and got["output_layers"] == want["output_layers"]


def test_utils_give_keras_arrays(keras_view):
    want = keras_view["utils"]
    assert keras.utils.to_categorical([[1], [0], [3]], 5).tolist() == want["categorical"]
    assert keras.utils.pad_sequences([[1, 2, 3], [4], []], maxlen=2, padding="post").tolist() == want["padded"]
    np.testing.assert_allclose(keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])), want["normalized"])


def test_the_argument_table_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_keras_arguments.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, "src/layers/keras_arguments.inc is stale: run scripts/make_keras_arguments.py"


def test_trainable_moves_weights_and_freezes_nested_layers():
    x = keras.Input((4,))
    dense = keras.layers.Dense(3)
    bn = keras.layers.BatchNormalization()
    model = keras.Model(x, bn(dense(x)))
    assert len(model.trainable_weights) == 4 and len(model.non_trainable_weights) == 2
    dense.trainable = False
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 4
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((8, 4), "float32"), np.ones((8, 3), "float32"), verbose=0)
    model.trainable = False
    assert not model.trainable_weights and not bn.trainable and model.get_config()["trainable"] is False
    data = np.random.default_rng(0).random((32, 4)).astype("float32") * 5
    before = model.get_weights()
    # Keras 3 keeps the trainable state of the first step after compile: without a new compile, training
    # goes on as it was (checked against Keras 3.15).
    model.fit(data, data[:, :3], epochs=1, verbose=0)
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    model.compile(optimizer="sgd", loss="mse")
    before = model.get_weights()
    model.fit(data, data[:, :3], epochs=1, verbose=0)
    for b, a in zip(before, model.get_weights()):  # a frozen BatchNormalization keeps its statistics
        np.testing.assert_array_equal(a, b)


def test_sequential_add_pop_and_a_build_from_the_first_data():
    model = keras.Sequential(name="seq")
    model.add(keras.layers.Dense(4, activation="relu"))
    model.add(keras.layers.Dense(1))
    model.compile(optimizer="adam", loss="mse")  # before the input is known: kept until the build
    x = np.ones((8, 5), "float32")
    model.fit(x, np.ones((8, 1), "float32"), verbose=0)
    assert model.input_shape == (None, 5) and len(model.layers) == 2 and model.name == "seq"
    popped = model.pop()
    assert popped.get_config()["units"] == 1 and len(model.layers) == 1
    assert model.compiled  # compiled again as it was: fit goes on
    model.fit(x, np.ones((8, 4), "float32"), verbose=0)
    assert model.predict(x, verbose=0).shape == (8, 4)
    clone = keras.models.clone_model(model)
    def shape(m):
        return [(l["class_name"], l["config"].get("units"), l["config"].get("activation")) for l in m.get_config()["layers"]]

    assert shape(clone) == shape(model) == [("InputLayer", None, None), ("Dense", 4, "relu")]
    assert not any(np.array_equal(a, b) for a, b in zip(clone.get_weights()[::2], model.get_weights()[::2]))
    again = keras.Model.from_config(model.get_config())
    assert [w.shape for w in again.get_weights()] == [w.shape for w in model.get_weights()]


def test_a_model_called_on_a_dict_maps_it_by_input_name():
    alpha, zeta = keras.Input((2,), name="alpha"), keras.Input((2,), name="zeta")
    inner = keras.Model([zeta, alpha], keras.layers.Subtract()([zeta, alpha]))
    a, z = keras.Input((2,), name="a"), keras.Input((2,), name="z")
    outer = keras.Model([a, z], inner({"alpha": a, "zeta": z}))
    ones, twos = np.ones((1, 2), "float32"), np.full((1, 2), 2.0, "float32")
    np.testing.assert_array_equal(outer.predict([ones, twos], verbose=0), twos - ones)  # zeta - alpha


def test_a_feature_extractor_of_a_loaded_model_shares_its_weights(tmp_path):
    x = keras.Input((6,), name="x")
    h = keras.layers.Dense(5, activation="tanh", name="features")(x)
    keras.Model(x, keras.layers.Dense(2, name="head")(h)).save(tmp_path / "m.keras")
    base = keras.models.load_model(tmp_path / "m.keras")
    extractor = keras.Model(base.input, base.get_layer("features").output)
    data = np.linspace(-1, 1, 24, dtype="float32").reshape(4, 6)
    kernel, bias = base.get_layer("features").get_weights()
    np.testing.assert_allclose(extractor.predict(data, verbose=0), np.tanh(data @ kernel + bias), rtol=1e-5, atol=1e-6)
    base.get_layer("features").set_weights([kernel * 2, bias])
    np.testing.assert_allclose(extractor.predict(data, verbose=0), np.tanh(data @ (kernel * 2) + bias), rtol=1e-5, atol=1e-6)


def test_errors_are_keras_kind_and_name_the_layer_and_value():
    with pytest.raises(ValueError, match=r"Unrecognized keyword arguments passed to Dense: \{'unitz': 3\}"):
        keras.layers.Dense(3, unitz=3)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        keras.layers.Dense()
    with pytest.raises(ValueError, match="Could not interpret initializer identifier: he_normall"):
        keras.layers.Dense(3, kernel_initializer="he_normall")
    a, b = keras.Input((4,)), keras.Input((5,))
    with pytest.raises(ValueError, match="plus"):
        keras.layers.Add(name="plus")([a, b])
    other = keras.Input((4,), name="other_model_input")
    mixed = keras.layers.Add(name="mixed")([a, other])
    with pytest.raises(ValueError, match="Graph disconnected.*other_model_input.*'mixed'"):
        keras.Model(a, mixed)
    with pytest.raises(ValueError, match="must be KerasTensors"):
        keras.Model(a, np.ones(3))


def test_load_weights_by_name_and_skip_mismatch_for_transfer_learning(tmp_path):
    # A file tf_keras wrote (layers dense, dense_1, dense_2) into a new model that shares two names,
    # gives dense_2 another shape and adds a layer the file does not have (tf_keras's
    # load_weights_from_hdf5_group_by_name).
    path = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "tf_keras", "model.h5")
    saved = {l.name: l.get_weights() for l in keras.models.load_model(path, compile=False).layers}
    x = keras.Input((8,))
    h = keras.layers.Dense(10, name="dense_1")(keras.layers.Dense(10, name="dense")(x))
    model = keras.Model(x, keras.layers.Dense(2, name="extra")(keras.layers.Dense(3, name="dense_2")(h)))
    before = {l.name: l.get_weights() for l in model.layers}
    with pytest.raises(ValueError, match="Shape mismatch in layer #3 \\(named 'dense_2'\\)"):
        model.load_weights(path, by_name=True)
    for layer in model.layers:  # a failed load changes nothing
        for a, b in zip(layer.get_weights(), before[layer.name]):
            np.testing.assert_array_equal(a, b)
    with pytest.warns(UserWarning, match="Skipping loading weights for layer #3 \\(named dense_2\\)"):
        model.load_weights(path, by_name=True, skip_mismatch=True)
    for name in ["dense", "dense_1"]:
        for a, b in zip(model.get_layer(name).get_weights(), saved[name]):
            np.testing.assert_array_equal(a, b)
    for name in ["dense_2", "extra"]:
        for a, b in zip(model.get_layer(name).get_weights(), before[name]):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="skip_mismatch can only be set to True when by_name is True"):
        model.load_weights(path, skip_mismatch=True)
    model.save(tmp_path / "m.keras")
    with pytest.raises(NotImplementedError, match="legacy .h5 forms"):
        model.load_weights(tmp_path / "m.keras", by_name=True)


class Scale(keras.layers.Layer):
    """A custom layer written the Keras way, used in a model built in code."""

    def __init__(self, init=1.0, **kwargs):
        super().__init__(**kwargs)
        self.init = init

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer=keras.initializers.Constant(self.init))

    def call(self, x):
        return x * np.asarray(self.w)

    def get_config(self):
        return {**super().get_config(), "init": self.init}


def test_custom_layers_in_models_built_in_code(tmp_path):
    x = keras.Input((3,))
    scale = Scale(2.0, name="scale")
    model = keras.Model(x, keras.layers.Dense(1)(scale(x)))
    assert model.get_layer("scale") is scale  # the user's own object
    np.testing.assert_array_equal(scale.get_weights()[0], [2.0, 2.0, 2.0])
    data = np.ones((4, 3), "float32")
    want = model.predict(data, verbose=0)
    model.save(tmp_path / "custom.keras")
    back = keras.models.load_model(tmp_path / "custom.keras", custom_objects={"Scale": Scale})
    np.testing.assert_allclose(back.predict(data, verbose=0), want, rtol=1e-6)


def test_a_nested_model_is_a_model_and_seeds_reach_sequential():
    x = keras.Input((3,))
    inner = keras.Model(x, keras.layers.Dense(2, name="inner_dense")(x), name="inner")
    z = keras.Input((3,))
    outer = keras.Model(z, keras.layers.Dense(1)(inner(z)))
    got = outer.get_layer("inner")
    assert isinstance(got, keras.Model) and [l.name for l in got.layers][-1] == "inner_dense"
    assert got.get_layer("inner_dense").output.shape == (None, 2)
    dense = keras.layers.Dense(4)
    with pytest.raises(AttributeError, match="has never been called"):
        dense.output
    h = dense(z)
    assert dense.output == h and dense(x) != h  # its first call's

    def weights():
        keras.utils.set_random_seed(7)
        return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)]).get_weights()[0]

    np.testing.assert_array_equal(weights(), weights())
