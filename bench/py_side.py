"""The Python side of `make bench` (bench/run_all.py): runs a list of jobs with one implementation in
this process and writes every per-item time as JSON, so that the driver computes its own statistics
and plots time against index. The driver chooses which jobs share a process: loads of many copies get
a fresh process each, because Keras's slowdown comes from what earlier loads left behind.

    python bench/py_side.py IMPL --threads 1 --jobs '[{"kind": "load", "file": F, "n": 30}]' --out R.json

IMPL: keras3 (Keras 3 on TensorFlow), tf_keras (Keras 2), kerascpp (the Python package), onnxruntime.
Jobs: make_big, export_onnx (writers, Keras only), load (optionally with clear_session between loads),
weights, big, predict. Per-call loops may stop early at `budget_s` seconds: Keras is too slow for
some counts, and the driver reports the count reached.
"""
import argparse
import array
import gc
import json
import os
import sys
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def timed(fn, n, budget_s=None):
    """Calls fn() n times (or until budget_s has passed) and returns its series: times in us, RSS.
    The times go into a preallocated array: a list of floats would itself grow RSS by 32 bytes a call."""
    us, done, before = array.array("d", bytes(8 * n)), n, rss_kb()
    start = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        us[i] = (t1 - t0) * 1e6
        if budget_s is not None and t1 - start > budget_s:
            done = i + 1
            break
    after = rss_kb()
    return {"us": us[:done].tolist(), "rss_before_kb": before, "rss_after_kb": after}


class Impl:
    """What a benchmark needs from one implementation: load, read weights, predict."""

    def __init__(self, name, threads):
        self.name = name
        if name in ("keras3", "tf_keras"):
            import tensorflow as tf
            # One thread count for every side (the driver pins OpenBLAS and ONNX Runtime the same way).
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(threads)
            self.versions = {"tensorflow": tf.__version__}
        if name == "keras3":
            import keras
            self.keras = keras
            self.versions["keras"] = keras.__version__
        elif name == "tf_keras":
            import tf_keras
            self.keras = tf_keras
            self.versions["tf_keras"] = tf_keras.__version__
        elif name == "kerascpp":
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
            import kerascpp
            self.keras = kerascpp
            self.versions = {"kerascpp": kerascpp.__version__}
        elif name == "onnxruntime":
            import onnxruntime as ort
            self.ort, self.threads = ort, threads
            self.versions = {"onnxruntime": ort.__version__}

    def load(self, path):
        if self.name == "onnxruntime":
            so = self.ort.SessionOptions()
            so.intra_op_num_threads = so.inter_op_num_threads = self.threads
            return self.ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return self.keras.models.load_model(path, compile=False)

    def clear_session(self):
        self.keras.backend.clear_session()

    def weight_calls(self, model):
        """get_value on the first kernel, get_weights, batch_get_value, as users of each would write them."""
        v, variables = model.weights[0], list(model.weights)
        if self.name == "keras3":  # Keras 3 has no keras.backend.get_value; this is what replaces it
            to_numpy = self.keras.ops.convert_to_numpy
            return {"get_value": lambda: to_numpy(v), "get_weights": model.get_weights,
                    "batch_get_value": lambda: [to_numpy(x) for x in variables]}
        K = self.keras.backend
        return {"get_value": lambda: K.get_value(v), "get_weights": model.get_weights,
                "batch_get_value": lambda: K.batch_get_value(variables)}

    def predict_calls(self, model, x):
        if self.name == "onnxruntime":
            name = model.get_inputs()[0].name
            return {"run": lambda: model.run(None, {name: x})}
        n = len(x)
        if self.name == "kerascpp":
            return {"predict": lambda: model.predict(x, batch_size=n), "call": lambda: model(x)}
        return {"predict": lambda: model.predict(x, batch_size=n, verbose=0),
                "call": lambda: model(x, training=False)}


def seed_check(impl, model, path):
    """Whether `model` still predicts what Keras predicted (the fixture's outputs beside `path`)."""
    d = os.path.dirname(path)
    try:
        x, want = np.load(os.path.join(d, "input_0.npy")), np.load(os.path.join(d, "output_0.npy"))
        got = np.asarray(impl.predict_calls(model, x)["predict"]())
        err = float(np.max(np.abs(got - want)))
        return {"first_model_predicts": bool(err <= 1e-5), "first_model_error": f"max abs error {err:.3g}"}
    except Exception as e:  # reported, not raised: whether earlier models survive is the measurement
        return {"first_model_predicts": False, "first_model_error": f"{type(e).__name__}: {e}"[:300]}


def make_big(impl, job):
    """A Dense stack of about job['mb'] MB of float32 weights (FaceNet's .h5 is 89 MB), as Keras saves it."""
    k, depth = impl.keras, job.get("depth", 24)
    width = int((job["mb"] * 1e6 / 4 / depth) ** 0.5)
    layers = [k.Input(shape=(width,))] + [k.layers.Dense(width, activation="relu") for _ in range(depth)]
    model = k.Sequential(layers)
    os.makedirs(job["dir"], exist_ok=True)
    files = []
    for ext in job["formats"]:
        path = os.path.join(job["dir"], f"big_{impl.name}.{ext}")
        model.save(path)
        files.append({"path": path, "bytes": os.path.getsize(path)})
    return {"files": files, "params": int(model.count_params()), "depth": depth, "width": width}


def run_job(impl, job):
    kind = job["kind"]
    if kind == "make_big":
        return make_big(impl, job)
    if kind == "export_onnx":  # Keras's own export (tf2onnx underneath); a model must be called first
        m = impl.load(job["file"])
        m.predict(np.zeros((1,) + tuple(m.input_shape[1:]), "float32"), verbose=0)
        m.export(job["out"], format="onnx", verbose=False)
        return {"out": job["out"]}
    if kind == "load":
        impl.load(job["file"])  # warm-up: imports and first-use costs (then dropped)
        if job.get("clear"):
            impl.clear_session()
        gc.collect()
        models = []

        def load_one():
            if job.get("clear") and models:
                impl.clear_session()
            models.append(impl.load(job["file"]))
        res = {"series": {"load": timed(load_one, job["n"], job.get("budget_s"))}}
        res.update(seed_check(impl, models[0], job["file"]))
        return res
    if kind == "weights":
        model = impl.load(job["file"])
        calls = impl.weight_calls(model)
        return {"series": {name: timed(fn, job["n"], job.get("budget_s")) for name, fn in calls.items()}}
    if kind == "big":
        impl.load(job["file"])  # warm-up, as bench_native does
        gc.collect()
        return {"series": {"load": timed(lambda: impl.load(job["file"]), job["n"])}}
    if kind == "predict":
        model = impl.load(job["file"])
        shape = (job["batch"], job.get("features", 8))
        x = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
        calls = impl.predict_calls(model, x)
        for fn in calls.values():  # warm-up: tracing, arenas, caches
            for _ in range(5):
                fn()
        return {"series": {name: timed(fn, job["n"], job.get("budget_s")) for name, fn in calls.items()}}
    raise ValueError(f"unknown job kind: {kind}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("impl", choices=["keras3", "tf_keras", "kerascpp", "onnxruntime"])
    p.add_argument("--jobs", required=True, help="a JSON list of jobs")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    impl = Impl(a.impl, a.threads)
    results = []
    for job in json.loads(a.jobs):
        t0 = time.perf_counter()
        try:
            res = run_job(impl, job)
        except Exception as e:  # one failed job (an export that does not convert) must not lose the rest
            res = {"error": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"[-2000:]}
        res.update(impl=a.impl, job=job, versions=impl.versions, wall_s=round(time.perf_counter() - t0, 2))
        results.append(res)
    with open(a.out, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
