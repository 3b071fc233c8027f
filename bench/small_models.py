"""Small models, one call at a time (issue 20): the per-layer latency table and the seed MLP, kerascpp
(C++ and Python) side by side with ONNX Runtime (from Python: its C API headers are not in any
registry this project may use) and Keras 3, beside RTNeural's published numbers.

Every model is written by Keras 3 (weights=random, seeded) into a temporary folder and exported to ONNX
by Keras's own exporter; each side then runs the same file at one thread. Times are medians of single
calls (C++: build/bench_native predict, which times `model(x)`; Python: time.perf_counter around one
call). Writes the `small-models` section of docs/benchmarks.md and the raw numbers as JSON.

    .venv/bin/python bench/small_models.py --build build [--quick]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import doc_sections  # noqa: E402

SEED = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "keras3", "model.keras")
# RTNeural's compare suite, one sample per call on an i7-8700B (shared/docs/landscape.md §8): run-time
# sizes (compile-time sizes in brackets), ns. ONNX Runtime's C++ Run there: 2,675 ns for Dense(8).
RTNEURAL_NS = {"Dense(8)": "28.6 (6.2)"}
# name -> (input shape without the batch, Keras layers after the input)
MODELS = {
    "Dense(8)": ((8,), lambda k: [k.layers.Dense(8)]),
    "Dense(16)": ((16,), lambda k: [k.layers.Dense(16)]),
    "Dense(64)": ((64,), lambda k: [k.layers.Dense(64)]),
    "Dense(64, tanh) x 3": ((64,), lambda k: [k.layers.Dense(64, activation="tanh") for _ in range(3)]),
    "Conv2D(8, 3x3) on 8x8x4": ((8, 8, 4), lambda k: [k.layers.Conv2D(8, 3, padding="same")]),
}


def median_us(fn, n, budget_s=10.0):
    for _ in range(min(200, n)):
        fn()
    ts, start = [], time.perf_counter()
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget_s:
            break
    return statistics.median(ts) * 1e6


def write_models(work):
    """Keras 3 writes every model (and the seed's ONNX export): {name: (keras file, onnx file, x shape)}."""
    import keras
    import tensorflow as tf
    # One thread on every side (set before TensorFlow runs anything).
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    keras.utils.set_random_seed(0)
    files = {}
    for i, (name, (shape, layers)) in enumerate(MODELS.items()):
        m = keras.Sequential([keras.Input(shape)] + layers(keras))
        path = os.path.join(work, f"model_{i}.keras")
        m.save(path)
        files[name] = path
    files["seed MLP 2x10"] = SEED
    onnx = {}
    for name, path in files.items():
        m = keras.models.load_model(path, compile=False)
        m.predict(np.zeros((1,) + tuple(m.input_shape[1:]), "float32"), verbose=0)
        onnx[name] = os.path.join(work, f"onnx_{len(onnx)}.onnx")
        m.export(onnx[name], format="onnx", verbose=False)
    return files, onnx


def keras_and_ort(files, onnx, batches, n):
    import keras
    import onnxruntime as ort
    import tensorflow as tf
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    out = {}
    for name, path in files.items():
        m = keras.models.load_model(path, compile=False)
        sess = ort.InferenceSession(onnx[name], so, providers=["CPUExecutionProvider"])
        feed = sess.get_inputs()[0].name
        for b in batches[name]:
            x = np.random.default_rng(0).random((b,) + tuple(m.input_shape[1:]), dtype=np.float32)
            out[f"{name}|{b}|keras3"] = median_us(lambda: m(x, training=False), max(20, n // 100), budget_s=5.0)
            out[f"{name}|{b}|onnxruntime"] = median_us(lambda: sess.run(None, {feed: x}), n)
    return out, {"keras": keras.__version__, "tensorflow": tf.__version__, "onnxruntime": ort.__version__}


def kerascpp_python(files, batches, n, build):
    code = """
import json, sys, numpy as np
sys.path.insert(0, sys.argv[1])
import kerascpp
sys.path.insert(0, sys.argv[2])
from small_models import median_us
files, batches, n = json.loads(sys.argv[3])
out = {}
for name, path in files.items():
    m = kerascpp.models.load_model(path, compile=False)
    for b in batches[name]:
        x = np.random.default_rng(0).random((b,) + tuple(m.input_shape[1:]), dtype=np.float32)
        out[name + "|" + str(b) + "|kerascpp Python"] = median_us(lambda: m(x), n)
print(json.dumps(out))
"""
    env = dict(os.environ, KERASCPP_BUILD=build, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "python"), HERE,
                          json.dumps([files, batches, n])], env=env, check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def kerascpp_native(files, batches, n, build, plan=True):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if not plan:
        env["KERASCPP_PLAN"] = "off"
    out = {}
    for name, path in files.items():
        for b in batches[name]:
            res = subprocess.run([os.path.join(build, "bench_native"), "predict", path, str(b), str(n)], env=env,
                                 check=True, capture_output=True, text=True)
            series = json.loads(res.stdout)["series"]
            key = "kerascpp C++" if plan else "kerascpp C++, interpreted"
            out[f"{name}|{b}|{key}"] = statistics.median(series["call"]["us"])
    return out


def fmt(us):
    if us is None:
        return "-"
    return f"{us * 1000:.0f} ns" if us < 1 else (f"{us:.2f} us" if us < 100 else f"{us / 1000:.2f} ms")


def report(results, versions, batches, n):
    cols = ["keras3", "onnxruntime", "kerascpp Python", "kerascpp C++", "kerascpp C++, interpreted"]
    lines = ["## Small models, one call at a time (issue 20)", "",
             f"`bench/small_models.py` (run by `make bench`), {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores, one thread on every side; Keras {versions['keras']} on TensorFlow "
             f"{versions['tensorflow']}, ONNX Runtime {versions['onnxruntime']} (from Python). Models written by "
             "Keras 3 with random weights and exported to ONNX by Keras; median of up to "
             f"{n:,} single calls of `model(x)` (ONNX Runtime: `session.run`). *interpreted*: the same C++ call "
             "with `KERASCPP_PLAN=off` (the graph run layer by layer, as before inference plans). RTNeural: its "
             "published numbers on an i7-8700B (run-time sizes, compile-time sizes in brackets), not measured here.",
             "", "| model | batch | Keras 3 | ONNX Runtime | kerascpp Python | kerascpp C++ | C++ interpreted | "
             "ONNX Runtime / kerascpp C++ | RTNeural (ns) |", "|---|---|---|---|---|---|---|---|---|"]
    for name in batches:
        for b in batches[name]:
            v = {c: results.get(f"{name}|{b}|{c}") for c in cols}
            ratio = f"{v['onnxruntime'] / v['kerascpp C++']:.1f}x" if v["onnxruntime"] and v["kerascpp C++"] else "-"
            lines.append(f"| {name} | {b:,} | " + " | ".join(fmt(v[c]) for c in cols) + f" | {ratio} | "
                         f"{RTNEURAL_NS.get(name, '-') if b == 1 else '-'} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true", help="a smoke run with tiny counts")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = p.parse_args()
    build = os.path.abspath(args.build)
    n = 200 if args.quick else 20000
    with tempfile.TemporaryDirectory() as work:
        files, onnx = write_models(work)
        batches = {name: [1] for name in files}
        batches["Dense(64, tanh) x 3"] = [1, 1024]
        batches["seed MLP 2x10"] = [1, 1024]
        results, versions = keras_and_ort(files, onnx, batches, n)
        results.update(kerascpp_python(files, batches, n, build))
        results.update(kerascpp_native(files, batches, n, build))
        results.update(kerascpp_native(files, batches, n, build, plan=False))
    with open(os.path.join(build, "small_models.json"), "w") as f:
        json.dump({"versions": versions, "results": results}, f, indent=1)
    text = report(results, versions, batches, n)
    print(text)
    if not args.quick:
        doc_sections.replace(args.out, "small-models", text)


if __name__ == "__main__":
    main()
