"""Epoch time of model.fit: Keras 3 (TensorFlow) and kerascpp (Python package) side by side, on the
same model, initial weights and random data (issue 6): an MLP, a small CNN and a 2-layer LSTM(32) over
40 steps. Each framework runs in its own process with
the same thread count; the first epoch (tracing / planning) is reported apart from the steady ones.
ResNet50 (keras.applications, weights=None) is timed per train_on_batch step at batch 32 (issue 21).

    .venv/bin/python bench/training.py [--samples 60000] [--cnn-samples 6000] [--lstm-samples 4096] [--epochs 3]
                                       [--threads 2] [--resnet-steps 3] [--models mlp cnn lstm resnet50]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

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
            result = {}
            for which in ("keras", "kerascpp"):
                out = subprocess.run([sys.executable, "-c", CHILD, kind, which, path, str(epochs), str(a.threads)],
                                     env=env, capture_output=True, text=True, check=True).stdout
                result[which] = json.loads(out.strip().splitlines()[-1])
            rows.append((kind, n, result))
    print(f"| model | samples | Keras 3 first epoch s | Keras 3 later epochs s | kerascpp first epoch s | "
          f"kerascpp later epochs s | Keras / kerascpp (later) | last-epoch loss Keras / kerascpp |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, n, r in rows:
        k, c = r["keras"], r["kerascpp"]
        kl = sum(k["times"][1:]) / max(1, len(k["times"]) - 1)
        cl = sum(c["times"][1:]) / max(1, len(c["times"]) - 1)
        print(f"| {kind} | {n} | {k['times'][0]:.2f} | {kl:.2f} | {c['times'][0]:.2f} | {cl:.2f} | {kl / cl:.2f} | "
              f"{k['losses'][-1]:.4f} / {c['losses'][-1]:.4f} |")
    print(f"\n{a.threads} threads each, batch 128, Adam, sparse categorical crossentropy, no shuffle; "
          f"resnet50: one train_on_batch of 32 images (224x224x3, weights=None) per \"epoch\", seconds per step; "
          f"{os.cpu_count()} CPUs.")


if __name__ == "__main__":
    main()
