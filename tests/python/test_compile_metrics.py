"""compile(metrics=..., weighted_metrics=...) in Keras 3's forms: per-output dicts and lists, metric
objects for one output, weighted metrics fed the sample and class weights, and Keras's log names
("out_b_accuracy", "weighted_mae", "mae_1"); and the F-score, IoU, rate-at-rate and MeanMetricWrapper
metrics in fit. Per-epoch logs and evaluate() against real Keras 3 (run in
its own process) from the same weights and data; and the errors of a dict or list that does not fit."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import keras_reference
import kerascpp as keras

# The same script builds, compiles and trains each case in real Keras and in kerascpp: `keras` is
# whichever module runs it.
CASES = r"""
import numpy as np

def two_outputs(keras):
    inp = keras.Input((6,), name="x")
    h = keras.layers.Dense(8, activation="tanh", name="h")(inp)
    a = keras.layers.Dense(1, name="out_a")(h)
    b = keras.layers.Dense(3, activation="softmax", name="out_b")(h)
    return keras.Model(inp, [a, b])

def one_output(keras):
    inp = keras.Input((6,), name="x")
    h = keras.layers.Dense(8, activation="tanh", name="h")(inp)
    return keras.Model(inp, keras.layers.Dense(3, activation="softmax", name="out_b")(h))

def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(48, 6)).astype("float32")
    ya = (x[:, :1] - 0.5 * x[:, 1:2]).astype("float32")
    yb = rng.integers(0, 3, size=(48,)).astype("int32")
    w = rng.uniform(0.2, 2.0, size=(48,)).astype("float32")
    return x, ya, yb, w

def python_functions(keras):
    # A loss and a metric written with keras.ops, and a Loss subclass, as Keras users write them.
    def soft_huber(y_true, y_pred):
        e = keras.ops.abs(y_true - y_pred)
        return keras.ops.mean(keras.ops.where(e < 0.5, 0.5 * keras.ops.square(e), 0.5 * e - 0.125), axis=-1)

    def worst_error(y_true, y_pred):
        return keras.ops.max(keras.ops.abs(y_true - y_pred), axis=-1)

    class WeightedCrossentropy(keras.losses.Loss):
        def call(self, y_true, y_pred):
            p = keras.ops.clip(y_pred, 1e-7, 1.0 - 1e-7)
            return -keras.ops.sum(y_true * keras.ops.log(p) * keras.ops.convert_to_tensor([1.0, 2.0, 0.5]), axis=-1)

    # Metric subclasses with their own state, update_state and result (the first from Keras's guide);
    # the second keeps an array, uses the default reset_state and reports one value per class.
    class CategoricalTruePositives(keras.metrics.Metric):
        def __init__(self, name="categorical_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_pred = keras.ops.reshape(keras.ops.argmax(y_pred, axis=1), (-1, 1))
            values = keras.ops.cast(keras.ops.reshape(y_true, (-1, 1)), "int32") == keras.ops.cast(y_pred, "int32")
            values = keras.ops.cast(values, "float32")
            if sample_weight is not None:
                values = keras.ops.multiply(values, keras.ops.reshape(keras.ops.cast(sample_weight, "float32"), (-1, 1)))
            self.true_positives.assign_add(keras.ops.sum(values))

        def result(self):
            return self.true_positives

        def reset_state(self):
            self.true_positives.assign(0.0)

    class MeanDistanceFromUniform(keras.metrics.Metric):
        def __init__(self, name=None, dtype=None):
            super().__init__(name=name, dtype=dtype)
            self.total = self.add_variable(shape=(3,), initializer="zeros", name="total")
            self.count = self.add_variable(shape=(), initializer="zeros", name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.total.assign_add(keras.ops.sum(keras.ops.abs(y_pred - 1.0 / 3.0), axis=0))
            self.count.assign_add(keras.ops.cast(keras.ops.shape(y_pred)[0], "float32"))

        def result(self):
            return self.total / self.count

    return soft_huber, worst_error, WeightedCrossentropy, CategoricalTruePositives, MeanDistanceFromUniform

def sparse_functions(keras):
    # A loss of integer labels against (batch, classes) probabilities: Keras traces it for the labels'
    # own shape, and so does kerascpp (once, at the first batch).
    def sparse_nll(y_true, y_pred):
        onehot = keras.ops.one_hot(keras.ops.cast(y_true, "int32"), 3)
        return -keras.ops.sum(onehot * keras.ops.log(keras.ops.clip(y_pred, 1e-7, 1.0)), axis=-1)

    def label_prob(y_true, y_pred):
        return keras.ops.sum(keras.ops.one_hot(keras.ops.cast(y_true, "int32"), 3) * y_pred, axis=-1)

    return sparse_nll, label_prob

def cases(keras):
    soft_huber, worst_error, WeightedCrossentropy, CategoricalTruePositives, MeanDistanceFromUniform = \
        python_functions(keras)
    return {
        "dict": dict(model=two_outputs, loss={"out_a": "mse", "out_b": "sparse_categorical_crossentropy"},
                     metrics={"out_a": ["mae"], "out_b": ["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=2)]},
                     weighted_metrics={"out_a": "mae", "out_b": ["accuracy"]}, sample_weight=True),
        "list": dict(model=two_outputs, loss=["mse", "sparse_categorical_crossentropy"],
                     metrics=[["mae", "mse"], "accuracy"], weighted_metrics=["mae", None], sample_weight=True),
        "one_per_output": dict(model=two_outputs, loss=["mse", "sparse_categorical_crossentropy"],
                               metrics=["mae", "accuracy"], sample_weight=False),
        "single": dict(model=one_output, loss="sparse_categorical_crossentropy",
                       metrics=["accuracy", "accuracy"], weighted_metrics=["accuracy", "sparse_top_k_categorical_accuracy"], sample_weight=True),
        "class_weight": dict(model=one_output, loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                             weighted_metrics=["accuracy"], class_weight={0: 1.0, 1: 2.0, 2: 0.5}),
        "more_metrics": dict(model=one_output, loss="categorical_crossentropy", one_hot=True, sample_weight=True,
                             metrics=[keras.metrics.F1Score(average="macro"), keras.metrics.OneHotMeanIoU(3),
                                      keras.metrics.PrecisionAtRecall(0.5, class_id=1),
                                      keras.metrics.MeanMetricWrapper(keras.losses.categorical_crossentropy, name="cce")],
                             weighted_metrics=[keras.metrics.FBetaScore(average="weighted", beta=2.0),
                                               keras.metrics.OneHotIoU(3, [0, 2], dtype="float32"),
                                               keras.metrics.RecallAtPrecision(0.4, class_id=0)]),
        "python_loss": dict(model=two_outputs, loss={"out_a": soft_huber, "out_b": "sparse_categorical_crossentropy"},
                            metrics={"out_a": [worst_error]}, weighted_metrics=[worst_error, None], sample_weight=True),
        "python_loss_rank_1_targets": dict(model=two_outputs, loss=[soft_huber, "sparse_categorical_crossentropy"],
                                           metrics=[["mae"], []], flat_a=True),
        "python_loss_class": dict(model=one_output, loss=WeightedCrossentropy(name="wce"), one_hot=True,
                                  metrics=[worst_error, "categorical_accuracy"]),
        "python_sparse_labels": dict(model=one_output, loss=sparse_functions(keras)[0], sample_weight=True,
                                     metrics=[sparse_functions(keras)[1], "accuracy"]),
        # Keras calls a metric function on (n,) labels against (n, 1) predictions as they are: numpy
        # broadcasting makes (n, n) of them, and the trace for the labels' shape does the same.
        "python_metric_broadcast": dict(model=two_outputs, loss=["mse", "sparse_categorical_crossentropy"],
                                        metrics=[[worst_error], []], flat_a=True),
        "python_metric_class": dict(model=one_output, loss="sparse_categorical_crossentropy", sample_weight=True,
                                    metrics=[CategoricalTruePositives(), MeanDistanceFromUniform(), "accuracy"],
                                    weighted_metrics=[CategoricalTruePositives(name="wctp")]),
        "python_metric_class_per_output": dict(model=two_outputs, loss=["mse", "sparse_categorical_crossentropy"],
                                               metrics={"out_b": [CategoricalTruePositives(), MeanDistanceFromUniform("mdu")]}),
    }

def run_all(keras):
    x, ya, yb, w = data()
    out = {}
    for name, c in cases(keras).items():
        model = c["model"](keras)
        rng = np.random.default_rng(11)
        model.set_weights([rng.normal(scale=0.5, size=v.shape).astype("float32") for v in model.get_weights()])
        model.compile(optimizer=keras.optimizers.Adam(0.02), loss=c["loss"], metrics=c.get("metrics"),
                      weighted_metrics=c.get("weighted_metrics"))
        y = ([ya[:, 0] if c.get("flat_a") else ya, yb] if len(model.outputs) == 2
             else np.eye(3, dtype="float32")[yb] if c.get("one_hot") else yb)
        kw = dict(batch_size=16, epochs=3, shuffle=False, verbose=0)
        if c.get("sample_weight"):
            kw["sample_weight"] = w
        if c.get("class_weight"):
            kw["class_weight"] = c["class_weight"]
        h = model.fit(x, y, **kw)
        ev_kw = {"sample_weight": w} if c.get("sample_weight") else {}
        plain = lambda v: np.asarray(v, dtype="float64").tolist()  # a number, or an array as a list
        out[name] = {"history": {k: [plain(v) for v in vs] for k, vs in h.history.items()},
                     "evaluate": [plain(v) for v in model.evaluate(x, y, batch_size=16, verbose=0, **ev_kw)],
                     "evaluate_dict": {k: plain(v) for k, v in model.evaluate(
                         x, y, batch_size=16, verbose=0, return_dict=True, **ev_kw).items()}}
    return out
"""

KERAS_REFERENCE = CASES + r"""
import json
import keras
print("RESULT" + json.dumps(run_all(keras)))
"""


@pytest.fixture(scope="module")
def runs():
    scope = {}
    exec(CASES, scope)
    return keras_reference.run(KERAS_REFERENCE), scope["run_all"](keras)


@pytest.mark.parametrize("name", ["dict", "list", "one_per_output", "single", "class_weight", "more_metrics",
                                  "python_loss", "python_loss_rank_1_targets", "python_loss_class",
                                  "python_sparse_labels", "python_metric_broadcast", "python_metric_class",
                                  "python_metric_class_per_output"])
def test_metrics_and_weighted_metrics_match_real_keras(runs, name):
    ref, mine = runs[0][name], runs[1][name]
    assert sorted(mine["history"]) == sorted(ref["history"])
    for key, values in ref["history"].items():  # float32 sums in another order: 1e-4 relative
        np.testing.assert_allclose(mine["history"][key], values, rtol=1e-4, atol=1e-6, err_msg=key)
    assert sorted(mine["evaluate_dict"]) == sorted(ref["evaluate_dict"])
    for key, value in ref["evaluate_dict"].items():
        np.testing.assert_allclose(mine["evaluate_dict"][key], value, rtol=1e-4, atol=1e-6, err_msg=key)
    assert len(mine["evaluate"]) == len(ref["evaluate"])
    for a, b in zip(mine["evaluate"], ref["evaluate"]):  # Keras's order
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def model():
    scope = {}
    exec(CASES, scope)
    return scope["two_outputs"](keras)


def test_a_dict_naming_no_output_is_refused_by_name():
    with pytest.raises(ValueError, match="out_c"):
        model().compile("adam", "mse", metrics={"out_c": ["mae"]})
    with pytest.raises(ValueError, match="out_c"):
        model().compile("adam", "mse", weighted_metrics={"out_a": "mae", "out_c": keras.metrics.MeanAbsoluteError()})


def test_metric_objects_per_output_are_the_objects_given():
    m = model()
    mae = keras.metrics.MeanAbsoluteError(name="their_mae")
    m.compile("adam", "mse", metrics={"out_a": [mae]})
    x = np.ones((4, 6), "float32")
    logs = m.evaluate(x, [np.zeros((4, 1), "float32"), np.zeros((4, 3), "float32")], verbose=0, return_dict=True)
    assert "out_a_their_mae" in logs and "out_b_their_mae" not in logs
    assert float(mae.result()) == pytest.approx(logs["out_a_their_mae"])


def test_compile_config_keeps_the_per_output_forms(tmp_path):
    m = model()
    m.compile("adam", ["mse", "sparse_categorical_crossentropy"], metrics={"out_b": ["accuracy"]},
              weighted_metrics={"out_a": ["mae", keras.metrics.MeanSquaredError(name="wmse")]})
    cfg = m.get_compile_config()
    assert cfg["metrics"] == {"out_b": ["accuracy"]}
    assert cfg["weighted_metrics"]["out_a"][0] == "mae"
    assert cfg["weighted_metrics"]["out_a"][1]["class_name"] == "MeanSquaredError"
    path = str(tmp_path / "m.keras")
    m.save(path)
    again = keras.models.load_model(path)
    assert again.compiled
    x = np.ones((4, 6), "float32")
    logs = again.evaluate(x, [np.zeros((4, 1), "float32"), np.zeros((4,), "int32")], verbose=0, return_dict=True)
    assert {"out_b_accuracy", "out_a_mae", "out_a_wmse"} <= set(logs)


def test_reduction_metrics_take_values_as_keras():
    """Mean and Sum: update_state(values, sample_weight), as Keras's (numbers from Keras's docstrings)."""
    s = keras.metrics.Sum()
    s.update_state([1, 3, 5, 7])
    assert float(s.result()) == 16.0
    s.update_state([1, 3], sample_weight=[1, 0])
    assert float(s.result()) == 17.0
    m = keras.metrics.Mean()
    m.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    assert float(m.result()) == 2.0


def test_mean_metric_wrapper_takes_keras_functions_and_refuses_python_ones_by_name():
    m = keras.metrics.MeanMetricWrapper(keras.losses.mean_absolute_error, name="wrapped")
    m.update_state([[0.0, 1.0]], [[1.0, 1.0]])
    assert float(m.result()) == pytest.approx(0.5) and m.name == "wrapped"
    assert m.get_config()["fn"]["config"] == "mean_absolute_error"

    def mine(y_true, y_pred):
        return y_pred
    with pytest.raises(NotImplementedError, match="Python function mine"):
        keras.metrics.MeanMetricWrapper(mine)


def test_python_losses_that_cannot_be_traced_are_refused_by_name():
    def numpy_loss(y_true, y_pred):
        return np.mean(np.asarray(y_true) - np.asarray(y_pred))  # needs values: not traceable
    m = model()
    with pytest.raises(NotImplementedError, match="the Python loss numpy_loss by tracing it with keras.ops"):
        m.compile("adam", {"out_a": numpy_loss, "out_b": "mse"})
    with pytest.raises(NotImplementedError, match="the Python metric numpy_loss"):
        m.compile("adam", "mse", metrics=[numpy_loss])


def test_python_loss_is_saved_by_name_and_labels_that_fit_no_trace_are_a_clear_error():
    scope = {}
    exec(CASES, scope)
    soft_huber, worst_error = scope["python_functions"](keras)[:2]
    m = scope["one_output"](keras)
    m.compile("sgd", soft_huber, metrics=[worst_error])
    assert m.get_compile_config()["loss"]["config"] == "soft_huber"
    assert m.get_compile_config()["metrics"][0] == {"module": "builtins", "class_name": "function",
                                                     "config": "worst_error", "registered_name": "function"}
    x = np.ones((4, 6), "float32")
    before = [w.copy() for w in m.get_weights()]
    # (4, 2) labels against (4, 3) predictions: traced again for them, the function cannot subtract them
    # (Keras fails there too); the error names the function and the shapes, the weights stay.
    with pytest.raises(NotImplementedError, match=r"soft_huber.*Cannot broadcast shapes") as e:
        m.fit(x, np.zeros((4, 2), "float32"), verbose=0)
    assert "(None, 2)" in str(e.value) and "(None, 3)" in str(e.value)
    for a, b in zip(m.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_metric_objects_given_with_functions_are_not_shared_between_outputs():
    scope = {}
    exec(CASES, scope)
    worst_error = scope["python_functions"](keras)[1]
    m = model()
    m.compile("sgd", "mse", metrics=[worst_error, keras.metrics.MeanAbsoluteError(name="m"), "mse"])
    x = np.random.default_rng(0).normal(size=(8, 6)).astype("float32")
    logs = m.evaluate(x, [np.zeros((8, 1), "float32"), np.ones((8, 3), "float32")], verbose=0, return_dict=True)
    assert logs["out_a_m"] != logs["out_b_m"]  # each output its own MeanAbsoluteError
    assert logs["out_a_m"] == pytest.approx(logs["out_a_mse"] ** 0.5, rel=1.0)  # a mean of |errors| of out_a


KERAS_FILE = r"""
import sys
import numpy as np
import keras
inp = keras.Input((6,), name="x")
h = keras.layers.Dense(8, activation="tanh", name="h")(inp)
m = keras.Model(inp, [keras.layers.Dense(1, name="out_a")(h), keras.layers.Dense(3, activation="softmax", name="out_b")(h)])
m.compile("adam", ["mse", "sparse_categorical_crossentropy"], metrics=["mae", "accuracy"],
          weighted_metrics=[None, ["accuracy", "sparse_top_k_categorical_accuracy"]])
rng = np.random.default_rng(3)
x = rng.normal(size=(16, 6)).astype("float32")
y = [rng.normal(size=(16, 1)).astype("float32"), rng.integers(0, 3, size=(16,))]
m.fit(x, y, verbose=0)
m.save(sys.argv[1])
np.savez(sys.argv[2], x=x, ya=y[0], yb=y[1])
print("KEYS" + ",".join(sorted(m.evaluate(x, y, verbose=0, return_dict=True))))
"""


def test_a_keras3_file_with_one_metric_list_entry_per_output_reloads_as_keras_reads_it(tmp_path):
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    path, data = str(tmp_path / "m.keras"), str(tmp_path / "d.npz")
    r = subprocess.run([sys.executable, "-c", KERAS_FILE, path, data], capture_output=True, text=True, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("KEYS")]
    if not line:
        pytest.fail("real Keras did not run: " + r.stderr[-800:])
    m = keras.models.load_model(path)
    d = np.load(data)
    logs = m.evaluate(d["x"], [d["ya"], d["yb"]], verbose=0, return_dict=True)
    assert sorted(logs) == line[0][len("KEYS"):].split(",")  # out_a_mae, out_b_accuracy, ... not every metric on both


def test_a_python_metric_class_runs_standalone_saves_its_class_and_names_itself_in_errors(tmp_path):
    scope = {}
    exec(CASES, scope)
    ctp_class, mdu_class = scope["python_functions"](keras)[3:]
    m = mdu_class()
    assert m.name == "mean_distance_from_uniform" and [v.shape for v in m.variables] == [(3,), ()]
    m.update_state(None, np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]], "float32"))
    np.testing.assert_allclose(m.result(), [(2 / 3 + 1 / 3) / 2, (1 / 3 + 1 / 6) / 2, (1 / 3 + 1 / 6) / 2], rtol=1e-6)
    m.reset_state()  # Keras's default: every variable back to zeros
    assert float(m.count) == 0.0 and not np.any(np.asarray(m.total))

    net = scope["one_output"](keras)
    net.compile("adam", "sparse_categorical_crossentropy", metrics=[ctp_class()])
    net.save(tmp_path / "m.keras")
    import zipfile
    cfg = json.loads(zipfile.ZipFile(tmp_path / "m.keras").read("config.json"))["compile_config"]
    assert cfg["metrics"][0]["class_name"] == "CategoricalTruePositives"
    assert cfg["metrics"][0]["registered_name"] == "CategoricalTruePositives"
    assert cfg["metrics"][0]["config"] == {"name": "categorical_true_positives", "dtype": "float32"}

    class Broken(keras.metrics.Metric):
        def update_state(self, y_true, y_pred, sample_weight=None):
            raise RuntimeError("no state here")

        def result(self):
            return 0.0

    net.compile("adam", "sparse_categorical_crossentropy", metrics=[Broken()])
    x, _, yb, _ = scope["data"]()
    with pytest.raises(RuntimeError, match="no state here") as e:
        net.fit(x, yb, epochs=1, verbose=0)
    assert "update_state of metric Broken 'broken'" in str(e.value) + "".join(
        getattr(e.value, "__notes__", []))

    class NoUpdate(keras.metrics.Metric):
        def result(self):
            return 0.0
    with pytest.raises(NotImplementedError, match="NoUpdate must implement update_state"):
        NoUpdate().update_state([1], [1])
    with pytest.raises(ValueError, match="unknown initializer"):
        NoUpdate().add_variable((2,), initializer="glorot_magic")
