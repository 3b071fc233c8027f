"""fit fed by a PyDataset whose batches take time to make (issue 18): does reading overlap training?
Keras 3 (TensorFlow) and kerascpp side by side, each in its own process with the same threads, on the
same Keras-written model. For each: the epoch with batches in memory (compute), the time to read the
batches alone (input: a 2 ms sleep each), and the epoch fed by the sleeping dataset (both). Overlap
makes `both` about max(compute, input); no overlap makes it their sum.

    .venv/bin/python bench/data_overlap.py [--batches 200] [--sleep-ms 2] [--epochs 3] [--threads 2] [--width 320]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import numpy as np
which, path, batches, sleep_s, epochs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
if which == "keras":
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    import keras
else:
    import kerascpp as keras
rng = np.random.default_rng(0)
x = rng.random((64, 256), dtype=np.float32)
y = rng.integers(0, 10, size=(64,))

class Batches(keras.utils.PyDataset):
    def __init__(self, sleep):
        super().__init__()
        self.sleep = sleep
    def __len__(self):
        return batches
    def __getitem__(self, i):
        if self.sleep:
            time.sleep(self.sleep)
        return x, y

def epoch_times(data):
    model = keras.models.load_model(path)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    times = []
    class T(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t0 = time.perf_counter()
        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t0)
    model.fit(data, epochs=epochs, shuffle=False, verbose=0, callbacks=[T()])
    return min(times[1:] or times)  # the first epoch traces / plans

t0 = time.perf_counter()
slow = Batches(sleep_s)
for i in range(batches):
    slow[i]
read = time.perf_counter() - t0
print(json.dumps({"compute": epoch_times(Batches(0)), "input": read, "both": epoch_times(Batches(sleep_s))}))
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--sleep-ms", type=float, default=2.0)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--width", type=int, default=320, help="hidden units: about 2 ms a step here")
    a = p.parse_args()
    import keras
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "model.keras")
        # Wide enough that one batch of 64 costs about as much to train as the 2 ms it takes to make.
        keras.Sequential([keras.Input((256,)), keras.layers.Dense(a.width, activation="relu"),
                          keras.layers.Dense(a.width, activation="relu"), keras.layers.Dense(10, activation="softmax")]).save(path)
        env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
                   OMP_NUM_THREADS=str(a.threads))
        rows = {}
        for which in ("keras", "kerascpp"):
            r = subprocess.run([sys.executable, "-c", CHILD, which, path, str(a.batches), str(a.sleep_ms / 1000),
                                str(a.epochs), str(a.threads)], capture_output=True, text=True, env=env, check=True)
            rows[which] = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"{a.batches} batches of 64, {a.sleep_ms} ms to make each, {a.threads} threads; seconds per epoch (best of "
          f"the epochs after the first)\n")
    print("| | compute (in memory) | input alone | fed by the slow dataset | both / (compute + input) | "
          "both / max(compute, input) |")
    print("|---|---|---|---|---|---|")
    for which, r in rows.items():
        c, i, b = r["compute"], r["input"], r["both"]
        print(f"| {which} | {c:.3f} | {i:.3f} | {b:.3f} | {b / (c + i):.2f} | {b / max(c, i):.2f} |")


if __name__ == "__main__":
    main()
