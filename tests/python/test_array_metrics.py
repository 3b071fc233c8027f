"""Metrics whose result is an array (Precision / Recall / the confusion counts with several thresholds,
F1Score / FBetaScore with average=None) and AUC over several labels (multi_label, num_labels,
label_weights, the PR-gain curve): per-epoch History, evaluate() and CSVLogger rows against real Keras 3
(run in its own process) from the same weights and data; and the callbacks that cannot take an array
(TensorBoard, a monitored array) refusing it by name, as Keras fails there too."""
import numpy as np
import pytest

import keras_reference
import kerascpp as keras

# The same script runs in real Keras and in kerascpp: `keras` is whichever module runs it.
CASES = r"""
import csv
import numpy as np

def model(keras, units):
    inp = keras.Input((5,), name="x")
    h = keras.layers.Dense(8, activation="tanh", name="h")(inp)
    return keras.Model(inp, keras.layers.Dense(units, activation="sigmoid", name="out")(h))

def data(units):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 5)).astype("float32")
    y = (x[:, :units] + 0.5 * rng.normal(size=(60, units)) > 0).astype("float32")
    w = rng.uniform(0.2, 2.0, size=(60,)).astype("float32")
    return x, y, w

def cases(keras):
    m = keras.metrics
    return {
        "thresholds": dict(units=1, metrics=[
            m.Precision(thresholds=[0.3, 0.5, 0.7]), m.Recall(thresholds=[0.0, 0.5, 1.0], name="recall_even"),
            m.TrueNegatives(thresholds=[0.5], name="tn_one")],
            weighted_metrics=[m.Precision(thresholds=[0.25, 0.75], name="wp")]),
        # Without validation: Keras's count metrics return their variable, so with validation its train
        # logs show the validation's counts (the same variable, read after validation ran); kerascpp's
        # show the training counts.
        "counts": dict(units=1, validation_split=0.0, metrics=[
            m.TruePositives(thresholds=[0.2, 0.6]), m.FalseNegatives(thresholds=[0.4, 0.8])],
            weighted_metrics=[m.FalsePositives(thresholds=[0.1, 0.3, 0.9], name="wfp")]),
        "per_class": dict(units=3, metrics=[
            m.F1Score(average=None, threshold=0.5), m.FBetaScore(average=None, beta=2.0),
            m.AUC(multi_label=True, name="auc_ml"), m.AUC(label_weights=[0.5, 1.0, 2.0], name="auc_lw"),
            m.AUC(multi_label=True, num_labels=3, label_weights=[1.0, 2.0, 0.5], curve="PR", name="auc_pr_ml"),
            m.AUC(curve="PRGAIN", name="auc_gain"),
            m.AUC(multi_label=True, curve="ROC", summation_method="majoring", thresholds=[0.2, 0.5, 0.8],
                  name="auc_thr_ml")],
            weighted_metrics=[m.AUC(multi_label=True, curve="PRGAIN", name="wauc_gain_ml")]),
    }

def plain(v):
    return np.asarray(v, dtype="float64").tolist()

def run_all(keras, log_dir):
    out = {}
    for name, c in cases(keras).items():
        x, y, w = data(c["units"])
        net = model(keras, c["units"])
        rng = np.random.default_rng(11)
        net.set_weights([rng.normal(scale=0.6, size=v.shape).astype("float32") for v in net.get_weights()])
        net.compile(optimizer=keras.optimizers.Adam(0.03), loss="binary_crossentropy", metrics=c["metrics"],
                    weighted_metrics=c["weighted_metrics"])
        path = f"{log_dir}/{name}.csv"
        h = net.fit(x, y, sample_weight=w, batch_size=16, epochs=3, shuffle=False, verbose=0,
                    validation_split=c.get("validation_split", 0.25),
                    callbacks=[keras.callbacks.CSVLogger(path)])
        net.save(f"{log_dir}/{name}.keras")
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        out[name] = {"history": {k: [plain(v) for v in vs] for k, vs in h.history.items()},
                     "evaluate": [plain(v) for v in net.evaluate(x, y, sample_weight=w, batch_size=16, verbose=0)],
                     "evaluate_dict": {k: plain(v) for k, v in net.evaluate(
                         x, y, sample_weight=w, batch_size=16, verbose=0, return_dict=True).items()},
                     "csv": rows}
    return out
"""

KERAS_REFERENCE = CASES + r"""
import json, sys
import keras
print("RESULT" + json.dumps(run_all(keras, sys.argv[1])))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    ref_dir, my_dir = tmp_path_factory.mktemp("keras"), tmp_path_factory.mktemp("kerascpp")
    scope = {}
    exec(CASES, scope)
    return keras_reference.run(KERAS_REFERENCE, ref_dir), scope["run_all"](keras, str(my_dir)), ref_dir


def close(mine, ref, what):
    # Counts and rates summed in float32 in another order: 1e-4 relative. An array stays an array of
    # the same length, a number a number.
    assert np.shape(mine) == np.shape(ref), what
    np.testing.assert_allclose(mine, ref, rtol=1e-4, atol=1e-6, err_msg=what)


def csv_value(text):
    return [float(v) for v in text[1:-1].split(", ")] if text.startswith("[") else float(text)


@pytest.mark.parametrize("name", ["thresholds", "counts", "per_class"])
def test_array_and_multi_label_metrics_match_real_keras(runs, name):
    ref, mine = runs[0][name], runs[1][name]
    assert list(mine["history"]) == list(ref["history"])
    for key, values in ref["history"].items():
        close(mine["history"][key], values, key)
    assert list(mine["evaluate_dict"]) == list(ref["evaluate_dict"])
    for key, value in ref["evaluate_dict"].items():
        close(mine["evaluate_dict"][key], value, key)
    assert len(mine["evaluate"]) == len(ref["evaluate"])
    for i, (a, b) in enumerate(zip(mine["evaluate"], ref["evaluate"])):  # Keras's order
        close(a, b, f"evaluate[{i}]")
    # CSVLogger: the same header, and each array written as Keras writes it ("[0.5, 0.25]", quoted).
    assert mine["csv"][0] == ref["csv"][0]
    for row_mine, row_ref in zip(mine["csv"][1:], ref["csv"][1:]):
        for key, a, b in zip(ref["csv"][0], row_mine, row_ref):
            assert a.startswith('"[') == b.startswith('"['), key
            if "NA" in (a, b):  # no validation: Keras leaves the val_ columns "NA"
                assert a == b, key
                continue
            close(csv_value(a.strip('"')), csv_value(b.strip('"')), key)


@pytest.mark.parametrize("name", ["thresholds", "per_class"])
def test_a_keras_file_compiled_with_them_evaluates_as_keras(runs, name):
    # Keras writes label_weights as a {"class_name": "__tensor__"} in compile_config; thresholds as a list.
    scope = {}
    exec(CASES, scope)
    x, y, w = scope["data"](3 if name == "per_class" else 1)
    net = keras.models.load_model(str(runs[2] / f"{name}.keras"))
    got = net.evaluate(x, y, sample_weight=w, batch_size=16, verbose=0, return_dict=True)
    ref = runs[0][name]["evaluate_dict"]
    assert list(got) == list(ref)
    for key, value in ref.items():
        close(np.asarray(got[key], dtype="float64").tolist(), value, key)


def trained(metrics):
    x = np.random.default_rng(0).normal(size=(32, 5)).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
    net.compile("sgd", "binary_crossentropy", metrics=metrics)
    return net, x, y


def test_array_results_reach_python_as_float32_arrays():
    p = keras.metrics.Precision(thresholds=[0.3, 0.6])
    p.update_state([[1], [0], [1]], [[0.4], [0.7], [0.9]])
    assert p.result().dtype == np.float32
    np.testing.assert_allclose(p.result(), [2 / 3, 1 / 2], rtol=1e-6)
    one = keras.metrics.Precision(thresholds=[0.3])  # one threshold: a number, as Keras
    one.update_state([[1], [0]], [[0.4], [0.7]])
    assert np.ndim(one.result()) == 0
    f1 = keras.metrics.F1Score(average=None)
    f1.update_state(np.eye(3, dtype="float32"), np.eye(3, dtype="float32"))
    assert f1.result().shape == (3,)


def test_callbacks_that_need_a_number_refuse_an_array_log_by_name(tmp_path):
    net, x, y = trained([keras.metrics.Precision(thresholds=[0.3, 0.6])])
    with pytest.raises(ValueError, match=r"TensorBoard.*\"precision\" is an array of 2 values"):
        net.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.TensorBoard(str(tmp_path / "tb"))])
    with pytest.raises(ValueError, match=r"\"precision\" is an array of 2 values.*monitored"):
        net.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.EarlyStopping(monitor="precision")])
    # Monitoring another key while an array metric trains is fine.
    h = net.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.EarlyStopping(monitor="loss")])
    assert len(h.history["precision"]) == 2 and h.history["precision"][0].shape == (2,)


def test_multi_label_auc_refuses_what_does_not_fit_by_name():
    with pytest.raises(ValueError, match="`num_labels` is needed only when `multi_label` is True"):
        keras.metrics.AUC(num_labels=3)
    with pytest.raises(ValueError, match="non-negative"):
        keras.metrics.AUC(multi_label=True, label_weights=[1.0, -1.0])
    auc = keras.metrics.AUC(multi_label=True, num_labels=3)
    with pytest.raises(ValueError, match="built for 3 labels; y_pred has 2"):
        auc.update_state(np.ones((4, 2)), np.full((4, 2), 0.5))
    with pytest.raises(ValueError, match="must have rank 2 when `multi_label=True`"):
        keras.metrics.AUC(multi_label=True).update_state(np.ones((4,)), np.full((4,), 0.5))
    with pytest.raises(ValueError, match="Threshold values must be in"):
        keras.metrics.Recall(thresholds=[0.5, 1.5])


def test_python_callbacks_read_and_set_array_logs(tmp_path):
    class Scale(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["precision"] = logs["precision"] * 0 + 0.25   # an array log changed in Python
            logs["extra"] = np.array([1.0, 2.0])               # and a new one

    net, x, y = trained([keras.metrics.Precision(thresholds=[0.3, 0.6])])
    h = net.fit(x, y, epochs=1, verbose=0, callbacks=[Scale(), keras.callbacks.CSVLogger(str(tmp_path / "l.csv"))])
    np.testing.assert_array_equal(h.history["precision"][0], [0.25, 0.25])
    np.testing.assert_array_equal(h.history["extra"][0], [1.0, 2.0])
    assert '"""[1.0, 2.0]"""' in (tmp_path / "l.csv").read_text()
    # ModelCheckpoint cannot put an array in a file name (Keras would write the array's repr there).
    with pytest.raises(ValueError, match=r"ModelCheckpoint: the filepath .* formats the log \"precision\", an array"):
        net.fit(x, y, epochs=1, verbose=0,
                callbacks=[keras.callbacks.ModelCheckpoint(str(tmp_path / "m_{precision}.weights.h5"),
                                                           save_weights_only=True)])


def test_a_metric_subclass_without_update_state_is_refused_by_name_in_fit():
    class Empty(keras.metrics.Metric):
        pass

    net, x, y = trained([Empty()])
    with pytest.raises(NotImplementedError, match="Empty must implement update_state"):
        net.fit(x, y, epochs=1, verbose=0)
