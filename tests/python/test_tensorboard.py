"""keras.callbacks.TensorBoard: the event files kerascpp writes are read back by the `tensorboard`
package itself and hold what real Keras 3's hold for the same fit (the same tags, runs and steps;
the values to 1e-4 relative)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kerascpp as keras

from tensorboard.backend.event_processing import event_accumulator  # a test dependency (requirements-test.txt)
from tensorboard.util import tensor_util

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "keras3", "model.keras")

FIT = r"""
def fit(keras, seed, x, y, log_dir, update_freq):
    m = keras.models.load_model(seed, compile=False)
    m.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    tb = keras.callbacks.TensorBoard(log_dir=log_dir, histogram_freq=1, update_freq=update_freq, write_graph=False)
    m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_data=(x[:16], y[:16]), callbacks=[tb])
"""

KERAS = FIT + r"""
import sys
import numpy as np
import keras
d = np.load(sys.argv[2])
fit(keras, sys.argv[1], d["x"], d["y"], sys.argv[3] + "/epoch", "epoch")
fit(keras, sys.argv[1], d["x"], d["y"], sys.argv[3] + "/batch", 3)
print("DONE")
"""


def data(n=64):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 8)).astype("float32")
    return x, (x[:, :1] * 0.5 - x[:, 1:2]).astype("float32")


def read_run(path):
    """{tag: [(step, value)]} of one run directory, read by TensorBoard's own event accumulator."""
    acc = event_accumulator.EventAccumulator(path, size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        out[tag] = [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]
    return out, acc


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    x, y = data()
    base = tmp_path_factory.mktemp("tb")
    np.savez(base / "data.npz", x=x, y=y)
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", KERAS, SEED, str(base / "data.npz"), str(base / "keras")],
                       capture_output=True, text=True, env=env)
    if "DONE" not in r.stdout:  # Keras and TensorFlow are pinned test dependencies
        pytest.fail("real Keras did not run: " + r.stderr[-800:])
    scope = {}
    exec(FIT, scope)
    scope["fit"](keras, SEED, x, y, str(base / "kerascpp" / "epoch"), "epoch")
    scope["fit"](keras, SEED, x, y, str(base / "kerascpp" / "batch"), 3)
    return base


# With an integer update_freq, Keras 3 records a summary only while the last train batch's count is
# a multiple of it (its record_if context stays on through on_epoch_end and the validation), so it loses
# the epoch scalars and histograms of most epochs; kerascpp writes those every epoch. The batch_ scalars
# are compared in that run, everything else in the update_freq="epoch" run.
@pytest.mark.parametrize("freq,run", [("epoch", "train"), ("epoch", "validation"), ("batch", "train")])
def test_event_files_hold_what_keras_writes(logs, freq, run):
    want, _ = read_run(str(logs / "keras" / freq / run))
    got, acc = read_run(str(logs / "kerascpp" / freq / run))
    if freq == "batch":
        want = {k: v for k, v in want.items() if k.startswith("batch_")}
        got = {k: v for k, v in got.items() if k.startswith("batch_")}
        assert sorted(got) == ["batch_loss", "batch_mae"] and [s for s, _ in got["batch_loss"]] == [3, 6, 9, 12]
    assert sorted(got) == sorted(want)
    for tag, events in want.items():
        assert [s for s, _ in got[tag]] == [s for s, _ in events], tag
        plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        for (_, a), (_, b) in zip(got[tag], events):
            if plugin == "histograms":  # [left, right, count] rows of 30 buckets over the weight's range
                assert a.shape == b.shape == (30, 3)
                np.testing.assert_allclose(a[:, :2], b[:, :2], rtol=1e-4, atol=1e-6, err_msg=tag)
                assert a[:, 2].sum() == b[:, 2].sum()
                # A weight within round-off of an edge may sit in the next bucket.
                assert np.abs(a[:, 2] - b[:, 2]).sum() <= 2, tag
            else:
                assert plugin == "scalars" and a.dtype == b.dtype == np.float32
                np.testing.assert_allclose(a, b, rtol=1e-4, err_msg=tag)


def test_projector_config_names_the_embeddings(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Embedding(10, 3, name="words"),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.arange(16).reshape(4, 4) % 10, np.zeros((4, 1), "float32")
    model.fit(x, y, verbose=0, callbacks=[keras.callbacks.TensorBoard(
        tmp_path, embeddings_freq=1, embeddings_metadata={"words": "words.tsv"})])
    from tensorboard.plugins import projector
    from google.protobuf import text_format
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(), projector.ProjectorConfig())
    assert [(e.tensor_name, e.metadata_path) for e in config.embeddings] == [
        ("layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE", "words.tsv")]
    with pytest.raises(ValueError, match="Unrecognized `Embedding` layer names"):
        model.fit(x, y, verbose=0, callbacks=[keras.callbacks.TensorBoard(
            tmp_path, embeddings_freq=1, embeddings_metadata={"nope": "a.tsv"})])


def test_graph_config_and_options(tmp_path):
    x, y = data()
    m = keras.models.load_model(SEED, compile=False)
    m.compile(optimizer="adam", loss="mse")
    m.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.TensorBoard(tmp_path, write_steps_per_second=True,
                                                                             embeddings_freq=1)])
    got, acc = read_run(str(tmp_path / "train"))
    assert acc.SummaryMetadata("keras").plugin_data.plugin_name == "graph_keras_model"
    config = json.loads(got["keras"][0][1].item().decode())
    assert config == json.loads(m.to_json())  # the config, as model.to_json() gives it
    assert "epoch_steps_per_second" in got and "epoch_learning_rate" in got
    assert (tmp_path / "train" / "keras_embedding.ckpt-0.weights.h5").exists()
    # evaluate(callbacks=[tensorboard]) outside fit writes its evaluation scalars too, as Keras.
    m.evaluate(x, y, verbose=0, callbacks=[keras.callbacks.TensorBoard(tmp_path / "eval")])
    got, _ = read_run(str(tmp_path / "eval" / "validation"))
    assert sorted(got) == ["evaluation_loss_vs_iterations"]
    with pytest.raises(NotImplementedError, match="write_images"):
        keras.callbacks.TensorBoard(tmp_path, write_images=True)
    with pytest.raises(NotImplementedError, match="profile_batch"):
        keras.callbacks.TensorBoard(tmp_path, profile_batch=2)
    with pytest.raises(ValueError, match="update_freq"):
        keras.callbacks.TensorBoard(tmp_path, update_freq="often")
