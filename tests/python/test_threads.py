"""predict() from many Python threads on one model gives the single-thread results (the GIL is
released while predicting), for built-in layers and for a model holding Python custom layers."""
import os
import threading

import numpy as np

import kerascpp as keras

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures")


def hammer(model, xs, threads=8, rounds=25):
    expected = [model.predict(x) for x in xs]
    errors = []
    start = threading.Barrier(threads)

    def work(k):
        try:
            start.wait()
            for r in range(rounds):
                i = (k + r) % len(xs)
                got = model.predict(xs[i], batch_size=7)
                np.testing.assert_allclose(got, expected[i], rtol=1e-6, atol=1e-7)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]


def test_predict_from_threads_on_one_model():
    model = keras.models.load_model(os.path.join(FIX, "deep_mlp_activations", "keras3", "model.keras"))
    rng = np.random.default_rng(0)
    n_in = model.inputs[0].shape[1]
    hammer(model, [rng.normal(size=(64 + i, n_in)).astype("float32") for i in range(6)])


def test_predict_from_threads_with_python_layers():
    from test_custom_objects import ScaledDense, double_relu
    model = keras.models.load_model(os.path.join(FIX, "custom", "keras3", "model.keras"),
                                    custom_objects={"ScaledDense": ScaledDense, "double_relu": double_relu})
    rng = np.random.default_rng(1)
    hammer(model, [rng.normal(size=(20 + i, 5)).astype("float32") for i in range(4)], rounds=10)


def test_gil_is_released_while_predicting():
    # A ticker thread records when it runs; with the GIL held through predict it could only tick before
    # and after the call, so ticks are counted strictly inside one long predict (margins of 5 ms, the
    # interpreter's switch interval), and there must be many of them.
    import time
    model = keras.models.load_model(os.path.join(FIX, "deep_mlp_activations", "keras3", "model.keras"))
    x = np.random.default_rng(2).normal(size=(200000, model.inputs[0].shape[1])).astype("float32")
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            stop.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    t0 = time.perf_counter()
    model.predict(x, batch_size=200000)
    t1 = time.perf_counter()
    stop.set()
    t.join()
    inside = [s for s in ticks if t0 + 0.005 < s < t1 - 0.005]
    assert t1 - t0 > 0.05, f"predict took {t1 - t0:.3f} s: too short to tell"
    assert len(inside) >= (t1 - t0) / 0.01, (len(inside), t1 - t0)
