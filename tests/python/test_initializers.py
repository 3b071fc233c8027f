"""A model built from a config without weights (model_from_json) starts from Keras's initializers, never
zeros: each initializer's distribution held to real Keras 3's (run in its own process) for the same
config and shape: mean, standard deviation and range. The numbers themselves differ (another random
generator), as they differ between two Keras runs without a seed."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kerascpp as keras

# (layer config extras, layer kind): the kernel's initializer under test. Dense kernels (fan_in 300,
# fan_out 200) and a Conv2D kernel (3, 3, 32, 64): fans over the receptive field. Each has over 18,000
# values, so that the statistics below sit many of their standard errors inside their bounds.
CASES = [
    ({"kernel_initializer": "glorot_uniform"}, "dense"),
    ({"kernel_initializer": "glorot_normal"}, "dense"),
    ({"kernel_initializer": "he_normal"}, "conv"),
    ({"kernel_initializer": "he_uniform"}, "conv"),
    ({"kernel_initializer": "lecun_normal"}, "dense"),
    ({"kernel_initializer": "lecun_uniform"}, "dense"),
    ({"kernel_initializer": {"class_name": "VarianceScaling",
                             "config": {"scale": 2.0, "mode": "fan_out", "distribution": "untruncated_normal"}}}, "conv"),
    ({"kernel_initializer": {"class_name": "RandomNormal", "config": {"mean": 0.5, "stddev": 0.2}}}, "dense"),
    ({"kernel_initializer": {"class_name": "RandomUniform", "config": {"minval": -0.3, "maxval": 0.1}}}, "dense"),
    ({"kernel_initializer": {"class_name": "TruncatedNormal", "config": {"mean": 0.0, "stddev": 0.1}}}, "dense"),
    ({"kernel_initializer": {"class_name": "Constant", "config": {"value": 0.25}}}, "dense"),
    ({"kernel_initializer": "orthogonal"}, "dense"),
    ({}, "embedding"),  # Keras's default for embeddings: RandomUniform(-0.05, 0.05)
]

KERAS = r"""
import json, sys
import numpy as np
import keras
cases = json.loads(sys.argv[1])
out = []
for extra, kind in cases:
    if kind == "dense":
        m = keras.Sequential([keras.Input((300,)), keras.layers.Dense(200, name="l", **extra)])
    elif kind == "conv":
        m = keras.Sequential([keras.Input((9, 9, 32)), keras.layers.Conv2D(64, 3, name="l", **extra)])
    else:
        m = keras.Sequential([keras.Input((4,)), keras.layers.Embedding(500, 64, name="l", **extra)])
    w = np.asarray(m.get_layer("l").weights[0])
    out.append({"json": m.to_json(), "mean": float(w.mean()), "std": float(w.std()), "min": float(w.min()),
                "max": float(w.max())})
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_stats():
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", KERAS, json.dumps(CASES)], capture_output=True, text=True, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    assert line, "real Keras (a test dependency) did not run: " + r.stderr[-800:]
    return json.loads(line[0][len("RESULT"):])


@pytest.mark.parametrize("i", range(len(CASES)))
def test_each_initializer_draws_what_keras_draws(keras_stats, i):
    want = keras_stats[i]
    model = keras.models.model_from_json(want["json"])
    w = np.asarray(model.get_layer("l").get_weights()[0], dtype=np.float64)
    n = w.size
    # The mean of n draws moves by about std / sqrt(n): 6 of those allow for both samples' noise.
    assert abs(w.mean() - want["mean"]) <= 6 * max(want["std"], 1e-7) / np.sqrt(n) + 1e-7, (w.mean(), want)
    # A sample standard deviation moves by about std / sqrt(2 n) (0.5 % here); 5 % is 7 of those for the
    # difference of two samples.
    assert abs(w.std() - want["std"]) <= 0.05 * want["std"] + 1e-7, (w.std(), want)
    # Bounded distributions (uniform, truncated at 2 stddev, constant) reach the same bounds; the extremes
    # of unbounded ones are too noisy to compare.
    unbounded = "untruncated" in json.dumps(CASES[i][0]) or any(
        k in json.dumps(CASES[i][0]) for k in ("RandomNormal", "orthogonal"))
    span = want["max"] - want["min"]
    assert unbounded or abs(w.min() - want["min"]) <= 0.1 * span + 1e-7 and abs(w.max() - want["max"]) <= 0.1 * span + 1e-7, \
        (w.min(), w.max(), want)


def test_orthogonal_kernels_are_orthogonal_and_lstm_forget_biases_start_at_one():
    lstm = {"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"batch_shape": [None, 5, 3], "name": "in"}},
        {"class_name": "LSTM", "config": {"name": "lstm", "units": 4}}]}}
    model = keras.models.model_from_json(json.dumps(lstm))
    kernel, recurrent, bias = model.get_layer("lstm").get_weights()
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(4), atol=1e-5)  # (4, 16): orthonormal rows
    np.testing.assert_array_equal(bias, np.r_[np.zeros(4), np.ones(4), np.zeros(8)].astype(np.float32))
    assert np.abs(kernel).max() > 0 and np.abs(kernel).max() <= np.sqrt(6 / (3 + 16)) + 1e-6  # GlorotUniform


def test_an_unknown_initializer_is_named():
    bad = {"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"batch_shape": [None, 3], "name": "in"}},
        {"class_name": "Dense", "config": {"name": "d", "units": 2, "kernel_initializer": "glorot_unifrom"}}]}}
    with pytest.raises(ValueError, match=r"Could not interpret initializer identifier: \"glorot_unifrom\" \(layer 'd' \(Dense\)\)"):
        keras.models.model_from_json(json.dumps(bad))
