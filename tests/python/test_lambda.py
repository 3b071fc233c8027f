"""Lambda layers in the Python package: functions from custom_objects (by the function's name or the
layer's), Keras backend functions a Keras 2 file names, and with load_model(safe_mode=False) the
function stored in the file, run as Keras runs it. Last, the FaceNet that Keras users load (keras-facenet's
Inception-ResNet-v1, 92 MB, written by tf_keras), which tf_keras itself cannot load back."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kerascpp as keras

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAMBDA = os.path.join(ROOT, "tests", "fixtures", "lambda_layers")
CUSTOM = os.path.join(ROOT, "tests", "fixtures", "custom")


def l2_normalize(x, axis):
    return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), 1e-12))


def of_scale(a, b):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-12))


def test_safe_mode_false_runs_the_stored_function():
    x = np.load(os.path.join(LAMBDA, "tf_keras", "x_0.npy"))
    y = np.load(os.path.join(LAMBDA, "tf_keras", "y_0.npy"))
    path = os.path.join(LAMBDA, "tf_keras", "model.h5")
    with pytest.raises(NotImplementedError, match="safe_mode=False"):
        keras.models.load_model(path)
    # scaling(x, scale) runs from its bytecode; Lambda(abs) is saved by name; K.l2_normalize is
    # saved as TensorFlow's error_handler wrapper without the function it wraps (tf_keras fails there).
    with pytest.raises(NotImplementedError, match="error_handler wraps a backend function"):
        keras.models.load_model(path, safe_mode=False)
    m = keras.models.load_model(path, safe_mode=False, custom_objects={"normalize": l2_normalize})
    assert of_scale(m.predict(x), y) < 1e-5  # float32 round-off of a small network
    # A closure's function is saved by name only: found in custom_objects.
    from test_custom_objects import ScaledDense, io
    with pytest.raises(NotImplementedError, match="uses 'relu' from the scope"):
        keras.models.load_model(os.path.join(CUSTOM, "tf_keras", "model.h5"),
                                custom_objects={"ScaledDense": ScaledDense}, safe_mode=False)
    m = keras.models.load_model(os.path.join(CUSTOM, "tf_keras", "model.h5"), safe_mode=False,
                                custom_objects={"ScaledDense": ScaledDense, "relu": lambda v: np.maximum(v, 0)})
    x, y = io("tf_keras")
    np.testing.assert_allclose(m.predict(x), y, rtol=1e-5, atol=1e-6)


def test_keras3_named_functions_come_from_custom_objects():
    # Keras 3 writes "builtins" as the module of any function (a user's own `mean` too): as in Keras,
    # the names are bound by custom_objects.
    x = np.load(os.path.join(LAMBDA, "keras3", "x_0.npy"))
    y = np.load(os.path.join(LAMBDA, "keras3", "y_0.npy"))
    with pytest.raises(NotImplementedError, match="'abs'"):
        keras.models.load_model(os.path.join(LAMBDA, "keras3", "model.keras"))
    for form in ["model.keras", "model.h5"]:
        m = keras.models.load_model(os.path.join(LAMBDA, "keras3", form),
                                    custom_objects={"abs": np.abs, "mean": lambda v, axis: v.mean(axis)})
        assert of_scale(m.predict(x), y) < 1e-5


def test_closures_keep_their_strings(tmp_path):
    import keras as real
    mode = "double"
    inp = real.Input((3,))
    model = real.Model(inp, real.layers.Lambda(lambda v: v * 2.0 if mode == "double" else v, name="lam")(inp))
    path = tmp_path / "closure.keras"
    model.save(path)
    m = keras.models.load_model(path, safe_mode=False)
    np.testing.assert_array_equal(m.predict(np.ones((1, 3), "float32")), [[2, 2, 2]])


def test_globals_a_stored_function_reads(tmp_path):
    # tf_keras runs a stored lambda with TensorFlow as `tf` in its globals; kerascpp never imports
    # TensorFlow, so it warns of what is missing at load, and runs the function once it is given.
    import tensorflow as tf
    import tf_keras
    ns = {"tf": tf}  # `tf` a global of the function, as in a script (not a closure of this test)
    exec("f = lambda v: tf.reduce_mean(v, axis=1) * 2.0", ns)
    inp = tf_keras.Input((3, 2))
    out = tf_keras.layers.Lambda(ns["f"], name="lam")(inp)
    path = tmp_path / "tf_lambda.h5"
    tf_keras.Model(inp, out).save(path)
    x = np.random.default_rng(0).standard_normal((2, 3, 2)).astype("float32")
    # (the load runs the function for its output shape, as Keras's does, and fails there)
    with pytest.warns(UserWarning, match="Lambda layer 'lam'.*'tf'.*custom_objects"):
        with pytest.raises(RuntimeError, match="layer 'lam'.*name 'tf' is not defined"):
            keras.models.load_model(path, safe_mode=False)
    m = keras.models.load_model(path, safe_mode=False, custom_objects={"tf": tf})
    np.testing.assert_allclose(m.predict(x), x.mean(axis=1) * 2.0, rtol=1e-6)


BUILD_FACENET = r'''
import importlib.util, os, sys, time
import numpy as np
import tf_keras
loc = importlib.util.find_spec("keras_facenet").submodule_search_locations[0]  # without its __init__
spec = importlib.util.spec_from_file_location("irv1", os.path.join(loc, "inception_resnet_v1.py"))
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
out = sys.argv[1]
tf_keras.utils.set_random_seed(7)
model = mod.InceptionResNetV1(input_shape=(160, 160, 3), classes=128, dropout_keep_prob=0.8)
x = np.random.default_rng(3).uniform(-1, 1, size=(2, 160, 160, 3)).astype("float32")
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), model.predict(x, verbose=0))
model.save(os.path.join(out, "facenet.h5"))
try:
    tf_keras.models.load_model(os.path.join(out, "facenet.h5"), safe_mode=False)
    print("tf_keras loaded it")
except Exception as e:  # noqa: BLE001
    print("tf_keras cannot load it:", type(e).__name__, str(e).splitlines()[0][:200])
'''


def test_facenet_as_keras_users_load_it(tmp_path):
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", BUILD_FACENET, str(tmp_path)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tf_keras cannot load it" in r.stdout, r.stdout  # the failure users report
    path = tmp_path / "facenet.h5"
    assert os.path.getsize(path) > 80e6
    m = keras.models.load_model(path, safe_mode=False, custom_objects={"normalize": l2_normalize})
    assert sum(l["class_name"] == "Lambda" for l in m.get_config()["layers"]) == 22  # 21 scaling + normalize
    got = m.predict(np.load(tmp_path / "x.npy"))
    # Inception-ResNet-v1's 400-odd float32 layers: round-off of different kernels reaches ~1e-5 of the
    # embedding's scale (keras.applications' InceptionResNetV2 stays within 1e-4).
    assert of_scale(got, np.load(tmp_path / "y.npy")) < 1e-4
