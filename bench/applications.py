#!/usr/bin/env python3
"""Image models (issue 5): kerascpp side by side with Keras 3 on TensorFlow, in one run, same machine
and threads. For each keras.applications file written by scripts/make_applications_fixtures.py:

  - load time of model.h5 and model.keras, against the time to read the file's bytes
    (`cat file > /dev/null` with the file in the page cache);
  - predict latency at batch 1 and throughput at batch 32, as `model(x)` and as `predict` (Keras's
    predict runs a compiled graph, its __call__ runs eagerly; either can be the faster one);
  - ONNX Runtime on Keras 3's ONNX export of the same model (issue 20), beside the `model(x)` rows.

    .venv/bin/python bench/applications.py APPS_DIR [--models ResNet50 InceptionResNetV2] [--repeats 5]

Prints a markdown table (median, min-max over repeats) and writes it to --out (default: stdout only).
Each side runs in its own subprocess, one after the other, so neither one's threads slow the other.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def stats(ts):
    return {"median": statistics.median(ts), "min": min(ts), "max": max(ts), "n": len(ts)}


def read_bytes_times(path, repeats):
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # into the page cache
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
        ts.append(time.perf_counter() - t)
    return stats(ts)


def onnx_side(folder, repeats, threads):
    """ONNX Runtime on Keras 3's own ONNX export of model.keras (written once, next to it): predict only."""
    import numpy as np
    path = os.path.join(folder, "model.onnx")
    if not os.path.exists(path):
        os.environ.setdefault("KERAS_BACKEND", "tensorflow")
        import keras
        m = keras.models.load_model(os.path.join(folder, "model.keras"), compile=False)
        m(np.load(os.path.join(folder, "input_0.npy"))[:1])  # Keras exports only a model that has been called
        m.export(path, format="onnx", verbose=False)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = sess.get_inputs()[0].name
    x = np.load(os.path.join(folder, "input_0.npy"))
    out = {}
    for batch, n in ((1, max(repeats * 4, 10)), (32, max(repeats, 3))):
        xb = np.resize(x, (batch,) + x.shape[1:]).astype("float32")
        sess.run(None, {feed: xb})
        sess.run(None, {feed: xb})
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            sess.run(None, {feed: xb})
            ts.append(time.perf_counter() - t)
        out[f"run batch {batch}"] = stats(ts)
    return out


def side(impl, folder, repeats, threads):
    """Runs in a child process: load and predict timings for one implementation."""
    import numpy as np
    if impl == "onnxruntime":
        return onnx_side(folder, repeats, threads)
    if impl == "keras":
        os.environ.setdefault("KERAS_BACKEND", "tensorflow")
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        import keras
        load = lambda p: keras.models.load_model(p, compile=False)  # noqa: E731
        call = lambda m, x: m(x, training=False).numpy()  # noqa: E731
    else:
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import kerascpp
        load = lambda p: kerascpp.models.load_model(p, compile=False)  # noqa: E731
        call = lambda m, x: m(x)  # noqa: E731
    predict = lambda m, x: m.predict(x, batch_size=len(x), verbose=0)  # noqa: E731
    out = {}
    x = np.load(os.path.join(folder, "input_0.npy"))
    x1 = x[:1].astype("float32")
    # kerascpp also loads with mmap=True (weights as views of the file), and times a load followed by
    # the first call, where a mapped model reads its weights' pages for the first time.
    modes = [("", load)]
    if impl == "kerascpp":
        modes.append((" (mmap)", lambda p: kerascpp.models.load_model(p, compile=False, mmap=True)))
    for form in ("model.h5", "model.keras"):
        path = os.path.join(folder, form)
        for suffix, loader in modes:
            try:
                loader(path)  # warm: page cache, libraries
            except Exception as e:  # noqa: BLE001 - Keras 3 cannot read some of its own .h5 files
                out["load " + form + suffix] = {"error": f"{type(e).__name__}: {str(e)[:80]}"}
                continue
            ts, first = [], []
            for _ in range(repeats):
                t = time.perf_counter()
                m = loader(path)
                ts.append(time.perf_counter() - t)
                if impl == "kerascpp":
                    call(m, x1)
                    first.append(time.perf_counter() - t)
                del m
            out["load " + form + suffix] = stats(ts)
            if first:
                out["load " + form + suffix + " + first model(x) batch 1"] = stats(first)
    model = load(os.path.join(folder, "model.keras"))
    for batch, n in ((1, max(repeats * 4, 10)), (32, max(repeats, 3))):
        xb = np.resize(x, (batch,) + x.shape[1:]).astype("float32")
        for how, fn in (("model(x)", call), ("predict", predict)):
            fn(model, xb)
            fn(model, xb)  # warm-up: plans, graph tracing
            ts = []
            for _ in range(n):
                t = time.perf_counter()
                fn(model, xb)
                ts.append(time.perf_counter() - t)
            out[f"{how} batch {batch}"] = stats(ts)
    return out


def fmt_ms(s):
    if "error" in s:
        return "-" if s["error"] == "-" else "cannot load: " + s["error"].split(".")[0]
    return f"{s['median'] * 1e3:.1f} ({s['min'] * 1e3:.1f}-{s['max'] * 1e3:.1f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("apps")
    ap.add_argument("--models", nargs="*", default=["ResNet50", "InceptionResNetV2"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--out")
    ap.add_argument("--doc", help="also put the table into this page's `applications` section (docs/benchmarks.md)")
    ap.add_argument("--side", help=argparse.SUPPRESS)  # child mode: IMPL
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.side:
        print(json.dumps(side(a.side, a.folder, a.repeats, a.threads)))
        return 0

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS=str(a.threads),
               OPENBLAS_NUM_THREADS=str(a.threads))
    lines = [f"Threads: {a.threads} on both sides (TensorFlow intra/inter-op; oneDNN/OpenMP and OpenBLAS). "
             f"Times in ms, median (min-max) over {a.repeats} loads / repeated predicts; ratio = Keras / kerascpp.", "",
             "ONNX Runtime runs Keras 3's ONNX export of the same model (`InferenceSession.run`, batch 1 and 32).", "",
             "| model | MB | read bytes | what | Keras 3 (TF) | kerascpp | ratio | kerascpp / read | ONNX Runtime | ORT / kerascpp |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name in a.models:
        folder = os.path.join(a.apps, name)
        if not os.path.exists(os.path.join(folder, "model.keras")):
            print(f"{name}: no files in {folder} (scripts/make_applications_fixtures.py writes them)", file=sys.stderr)
            continue
        res = {}
        for impl in ("keras", "kerascpp", "onnxruntime"):
            p = subprocess.run([sys.executable, __file__, a.apps, "--side", impl, "--folder", folder,
                                "--repeats", str(a.repeats), "--threads", str(a.threads)],
                               env=env, capture_output=True, text=True)
            if p.returncode != 0:
                raise SystemExit(f"{impl} on {name} failed:\n{p.stderr[-3000:]}")
            res[impl] = json.loads(p.stdout.strip().splitlines()[-1])
        whats = list(res["kerascpp"])  # Keras's rows, with kerascpp's mapped loads among them
        for what in whats:
            k, c = res["keras"].get(what, {"error": "-"}), res["kerascpp"][what]
            read, mb, vs_read = "", "", ""
            if what.startswith("load") and "+" not in what:
                path = os.path.join(folder, what.split()[1])
                r = read_bytes_times(path, a.repeats)
                mb, read = f"{os.path.getsize(path) / 1e6:.0f}", fmt_ms(r)
                vs_read = f"{c['median'] / r['median']:.1f}x"
            ratio = "-" if "error" in k else f"{k['median'] / c['median']:.2f}x"
            o = res["onnxruntime"].get(what.replace("model(x)", "run"), None) if what.startswith("model(x)") else None
            ort_cells = f"{fmt_ms(o)} | {o['median'] / c['median']:.2f}x" if o else "- | -"
            lines.append(f"| {name} | {mb} | {read} | {what} | {fmt_ms(k)} | {fmt_ms(c)} | {ratio} | {vs_read} | {ort_cells} |")
        print("\n".join(lines[-len(whats):]), flush=True)
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.doc:
        sys.path.insert(0, HERE)
        import doc_sections
        import platform
        head = ("## Image models: kerascpp, Keras 3 on TensorFlow and ONNX Runtime (issues 5, 20)\n\n"
                f"`bench/applications.py` (`make bench-applications`), {platform.processor() or platform.machine()}, "
                f"{os.cpu_count()} cores. keras.applications models written by Keras 3 (weights=None, random "
                "BatchNormalization statistics); each side in its own process. kerascpp runs them on inference "
                "plans (convolutions with their BatchNormalization folded in and Add / relu as oneDNN post-ops, "
                "ZeroPadding as the next convolution's or max pooling's own padding; "
                "batch 32 in chunks of up to 64 MB of values, as many bytes as the weights).\n\n"
                "*(mmap)*: kerascpp's `load_model(path, mmap=True)`, each weight a view of the mapped file where "
                "the layout allows: every `.h5`; a Keras-written `.keras` only when its weights member starts at an "
                "offset a float can sit at (InceptionResNetV2's here; ResNet50's and MobileNetV2's are copied). "
                "*+ first model(x) batch 1*: the load and the first call after it, which makes the plan's oneDNN "
                "primitives and folds BatchNormalization into copies of the kernels, and, for a mapped model, reads "
                "the weights' pages for the first time.\n\n")
        doc_sections.replace(a.doc, "applications", head + text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
