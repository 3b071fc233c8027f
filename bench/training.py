"""Epoch time of model.fit: Keras 3 (TensorFlow) and kerascpp (Python package) side by side, on the
same model, initial weights and random data (issue 6): an MLP, a small CNN and a 2-layer LSTM(32) over
40 steps. Each framework runs in its own process with
the same thread count; the first epoch (tracing / planning) is reported apart from the steady ones.
ResNet50 (keras.applications, weights=None) is timed per train_on_batch step at batch 32 (issue 21).

    .venv/bin/python bench/training.py [--samples 60000] [--cnn-samples 6000] [--lstm-samples 4096] [--epochs 3]
                                       [--threads 2] [--resnet-steps 3] [--models mlp cnn lstm resnet50]
                                       [--rounds 2] [--doc docs/benchmarks.md]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_sections  # noqa: E402

CHILD = r"""
import json, os, sys, time
import numpy as np
kind, which, path, epochs, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
data = np.load(path + ".npz")
x, y = data["x"], data["y"]
if which == "keras":
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    import keras
else:
    import kerascpp as keras
model = keras.models.load_model(path + ".keras")
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
times, losses = [], []
if kind == "resnet50":  # train_on_batch at batch 32: the first step (tracing / planning), then `epochs` more
    for i in range(epochs + 1):
        t0 = time.perf_counter()
        logs = model.train_on_batch(x, y, return_dict=True)
        times.append(time.perf_counter() - t0)
        losses.append(float(logs["loss"]))
    print(json.dumps({"times": times, "losses": losses}))
    sys.exit(0)
class T(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()
    def on_epoch_end(self, epoch, logs=None):
        times.append(time.perf_counter() - self.t0)
        losses.append(float(logs["loss"]))
model.fit(x, y, batch_size=128, epochs=epochs, shuffle=False, verbose=0, callbacks=[T()])
print(json.dumps({"times": times, "losses": losses}))
"""


# Issue 21's goals: kerascpp's time per epoch (per step for ResNet50) at most this fraction of Keras's.
GOALS = {"mlp": 0.5, "cnn": 0.8, "lstm": 1.0, "resnet50": 1.0}
NAMES = {"mlp": "MLP 784-128-10", "cnn": "CNN (2 conv, 2 max-pool, dense)", "lstm": "2-layer LSTM(32), 40 steps",
         "resnet50": "ResNet50, batch 32 (train_on_batch)"}


def build(kind, path, samples):
    import numpy as np
    import keras
    rng = np.random.default_rng(0)
    if kind == "resnet50":
        x = rng.random((samples, 224, 224, 3), dtype=np.float32)
        model = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3), classes=1000)
        y = rng.integers(0, 1000, samples).astype(np.int32)
        np.savez(path + ".npz", x=x, y=y)
        model.save(path + ".keras")
        return
    if kind == "mlp":
        x = rng.random((samples, 784), dtype=np.float32)
        model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                                  keras.layers.Dense(10, activation="softmax")])
    elif kind == "lstm":  # the 2-layer LSTM(32) over 40 steps of issue 21's table, as a classifier
        x = rng.random((samples, 40, 8), dtype=np.float32)
        model = keras.Sequential([keras.Input((40, 8)), keras.layers.LSTM(32, return_sequences=True),
                                  keras.layers.LSTM(32), keras.layers.Dense(10, activation="softmax")])
    else:
        x = rng.random((samples, 28, 28, 1), dtype=np.float32)
        model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Conv2D(32, 3, activation="relu"),
                                  keras.layers.MaxPooling2D(), keras.layers.Conv2D(64, 3, activation="relu"),
                                  keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                                  keras.layers.Dense(10, activation="softmax")])
    y = rng.integers(0, 10, samples).astype(np.int32)
    np.savez(path + ".npz", x=x, y=y)
    model.save(path + ".keras")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=60000)
    ap.add_argument("--cnn-samples", type=int, default=6000)
    ap.add_argument("--lstm-samples", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="times each side runs each model")
    ap.add_argument("--doc", default=None, help="write the table into this page's `training` section")
    ap.add_argument("--models", nargs="+", default=["mlp", "cnn", "lstm", "resnet50"],
                    choices=["mlp", "cnn", "lstm", "resnet50"], help="which rows to run")
    ap.add_argument("--resnet-steps", type=int, default=3, help="train_on_batch steps of ResNet50 at batch 32 (0: skip)")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads),
               TF_CPP_MIN_LOG_LEVEL="3")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("mlp", a.samples, a.epochs), ("cnn", a.cnn_samples, a.epochs), ("lstm", a.lstm_samples, a.epochs)]
        if a.resnet_steps:
            runs.append(("resnet50", 32, a.resnet_steps))
        runs = [r for r in runs if r[0] in a.models]
        for kind, n, epochs in runs:
            path = os.path.join(tmp, kind)
            build(kind, path, n)
            results = []
            for _ in range(a.rounds):  # the sides alternate, so a slow spell of the machine hits both
                result = {}
                for which in ("keras", "kerascpp"):
                    out = subprocess.run([sys.executable, "-c", CHILD, kind, which, path, str(epochs), str(a.threads)],
                                         env=env, capture_output=True, text=True, check=True).stdout
                    result[which] = json.loads(out.strip().splitlines()[-1])
                results.append(result)
            rows.append((kind, n, results))
    lines = [f"| model | samples | Keras 3 first / later epochs s | kerascpp first / later epochs s | "
             f"kerascpp / Keras (later) | goal | last-epoch loss Keras / kerascpp |",
             "|---|---|---|---|---|---|---|"]
    span = lambda v: f"{min(v):.2f}" if f"{min(v):.2f}" == f"{max(v):.2f}" else f"{min(v):.2f}-{max(v):.2f}"
    for kind, n, results in rows:
        first, later, ratio = {"keras": [], "kerascpp": []}, {"keras": [], "kerascpp": []}, []
        for r in results:
            for which in ("keras", "kerascpp"):
                t = r[which]["times"]
                first[which].append(t[0])
                later[which].append(sum(t[1:]) / max(1, len(t) - 1))
            ratio.append(later["kerascpp"][-1] / later["keras"][-1])
        goal = GOALS[kind]
        met = "met" if max(ratio) <= goal else ("met in %d of %d" % (sum(x <= goal for x in ratio), len(ratio)))
        last = results[-1]
        lines.append(f"| {NAMES[kind]} | {n} | {span(first['keras'])} / {span(later['keras'])} | "
                     f"{span(first['kerascpp'])} / {span(later['kerascpp'])} | {span(ratio)}x | "
                     f"at most {goal}x: {met} | {last['keras']['losses'][-1]:.4f} / {last['kerascpp']['losses'][-1]:.4f} |")
    note = (f"{a.threads} threads each, batch 128, Adam, sparse categorical crossentropy, no shuffle; seconds per "
            f"epoch (ResNet50: per train_on_batch step of 32 images, 224x224x3, weights=None); {a.rounds} rounds, "
            f"each side in its own process, the sides alternating; ranges are over the rounds. "
            f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.")
    print("\n".join(lines) + "\n\n" + note)
    if a.doc:
        doc_sections.replace(a.doc, "training", "## Training (issues 6, 21)\n\nWritten by `make bench-training` "
                             "(bench/training.py): `fit` of the same Keras-written model, initial weights and data in "
                             "Keras 3 on TensorFlow and in kerascpp's Python package. Goals are issue 21's.\n\n"
                             + "\n".join(lines) + "\n\n" + note + "\n")



if __name__ == "__main__":
    main()
