"""Sequence models, kerascpp (Python package) against Keras 3 on TensorFlow, each in its own process on the
same files and data (issue 15); writes the "sequences" section of docs/benchmarks.md.

    .venv/bin/python bench/sequences.py [--threads 2] [--rounds 200] [--epochs 3] [--build build]

  - predict at batch 1: a 2-layer LSTM(32) over 40 steps (Keras's eager model(x), the call a serving loop
    makes, and its predict_on_batch), kerascpp's predict;
  - predict at batch 1,024 in one call: the same LSTM (kerascpp's inference plan) and the masked
    Embedding(mask_zero) + Bidirectional LSTM(32) below (kerascpp's layers' loop);
  - the cost of one LSTM(8) step: streamed one sample at a time (a stateful Dense(8) -> LSTM(8) model
    called once per step, kerascpp from C++ with build/bench_native, Keras with predict_on_batch), and
    inside a sequence (the same layers over 1,000 steps at batch 1, divided by the steps);
  - a training epoch: Embedding(mask_zero) + Bidirectional LSTM(32) classifier, a GRU(32) regressor and
    the 2-layer LSTM(32) as a regressor.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_sections  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time
import numpy as np
which, folder, rounds, epochs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if which == "keras":
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    import keras
else:
    import kerascpp as keras

def timed(f, n):
    for _ in range(min(20, n)):
        f()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return float(np.median(ts)), float(min(ts))

out = {}
x = np.load(folder + "/lstm2.npy")
m = keras.models.load_model(folder + "/lstm2.keras")
if which == "keras":
    out["lstm2_call"] = timed(lambda: m(x), max(10, rounds // 10))
    out["lstm2_predict_on_batch"] = timed(lambda: m.predict_on_batch(x), rounds)
else:
    out["lstm2_predict"] = timed(lambda: m.predict(x, verbose=0), rounds)
# A batch of 1,024 in one call: the plan's blocks of rows (lstm2), and a masked model the plan does not take
# (Embedding(mask_zero): Rnn::run_fast's blocks of rows).
big = {"lstm2": (m, np.load(folder + "/lstm2.npz")["x"][:1024])}
big["bilstm"] = (keras.models.load_model(folder + "/bilstm.keras"), np.load(folder + "/bilstm.npz")["x"][:1024])
for kind, (model, xb) in big.items():
    f = (lambda: model.predict_on_batch(xb)) if which == "keras" else (lambda: model.predict(xb, batch_size=1024, verbose=0))
    out[kind + "_1024"] = timed(f, max(10, rounds // 10))
x8 = np.load(folder + "/lstm8.npy")
m8 = keras.models.load_model(folder + "/lstm8.keras")
f8 = (lambda: m8.predict_on_batch(x8)) if which == "keras" else (lambda: m8.predict(x8, verbose=0))
out["lstm8_sequence"] = timed(f8, max(10, rounds // 10))
if which == "keras":  # kerascpp's streamed step is timed in C++ (bench_native step)
    m1 = keras.models.load_model(folder + "/lstm8_step.keras")
    x1 = x8[:, :1]
    out["lstm8_step"] = timed(lambda: m1.predict_on_batch(x1), rounds)
for kind in ("bilstm", "gru", "lstm2"):
    d = np.load(folder + f"/{kind}.npz")
    model = keras.models.load_model(folder + f"/{kind}.keras")
    loss = "categorical_crossentropy" if kind == "bilstm" else "mse"
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss=loss)
    times, losses = [], []
    class T(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t0 = time.perf_counter()
        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t0)
            losses.append(float(logs["loss"]))
    model.fit(d["x"], d["y"], batch_size=32, epochs=epochs, shuffle=False, verbose=0, callbacks=[T()])
    out[kind] = {"times": times, "losses": losses}
print(json.dumps(out))
"""


def build(folder):
    import keras
    import numpy as np
    L = keras.layers
    rng = np.random.default_rng(0)
    keras.utils.set_random_seed(0)
    m = keras.Sequential([keras.Input((40, 8)), L.LSTM(32, return_sequences=True), L.LSTM(32), L.Dense(1)])
    m.save(f"{folder}/lstm2.keras")
    np.save(f"{folder}/lstm2.npy", rng.standard_normal((1, 40, 8)).astype(np.float32))
    x = rng.standard_normal((4096, 40, 8)).astype(np.float32)
    np.savez(f"{folder}/lstm2.npz", x=x, y=(x[:, -10:, 0].mean(axis=1, keepdims=True)).astype(np.float32))
    m = keras.Sequential([keras.Input((1000, 1)), L.Dense(8, activation="tanh"), L.LSTM(8), L.Dense(1)])
    m.save(f"{folder}/lstm8.keras")
    np.save(f"{folder}/lstm8.npy", rng.standard_normal((1, 1000, 1)).astype(np.float32))
    m = keras.Sequential([keras.Input(batch_shape=(1, 1, 1)), L.Dense(8, activation="tanh"),
                          L.LSTM(8, stateful=True), L.Dense(1)])
    m.save(f"{folder}/lstm8_step.keras")
    tokens = rng.integers(1, 2000, size=(4096, 40))
    lengths = rng.integers(5, 41, size=4096)
    for i, n in enumerate(lengths):
        tokens[i, n:] = 0
    labels = np.eye(4, dtype=np.float32)[(tokens[:, :2].sum(axis=1) + lengths) % 4]
    m = keras.Sequential([keras.Input((40,)), L.Embedding(2000, 32, mask_zero=True),
                          L.Bidirectional(L.LSTM(32)), L.Dense(4, activation="softmax")])
    m.save(f"{folder}/bilstm.keras")
    np.savez(f"{folder}/bilstm.npz", x=tokens.astype(np.float32), y=labels)
    x = rng.standard_normal((4096, 30, 8)).astype(np.float32)
    y = (x[:, :, 0].sum(axis=1, keepdims=True) * 0.2).astype(np.float32)
    m = keras.Sequential([keras.Input((30, 8)), L.GRU(32), L.Dense(1)])
    m.save(f"{folder}/gru.keras")
    np.savez(f"{folder}/gru.npz", x=x, y=y)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the CMake build folder (bench_native)")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads),
               TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.path.join(ROOT, "python"))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r});"
                        f"import sequences; sequences.build({tmp!r})"], env=env, check=True, capture_output=True)
        r = {}
        for which in ("keras", "kerascpp"):
            out = subprocess.run([sys.executable, "-c", CHILD, which, tmp, str(a.rounds), str(a.epochs), str(a.threads)],
                                 env=env, capture_output=True, text=True, check=True).stdout
            r[which] = json.loads(out.strip().splitlines()[-1])
        native = subprocess.run([os.path.join(a.build, "bench_native"), "step", f"{tmp}/lstm8_step.keras", "1",
                                 str(a.rounds * 10)], env=env, capture_output=True, text=True, check=True).stdout
        for mode in ("step", "step_into"):
            steps = json.loads(native)["series"][mode]["us"]
            r["kerascpp"]["lstm8_" + mode] = (statistics.median(steps) * 1e-6, min(steps) * 1e-6)
    k, c = r["keras"], r["kerascpp"]
    us = lambda t: f"{t * 1e6:,.0f}"  # noqa: E731
    lines = ["## Sequence models (issue 15)", "",
             f"`make bench-sequences` (bench/sequences.py): each framework in its own process, {a.threads} threads, "
             f"same files and data; medians (min) over {a.rounds} calls after 20 warm-up calls; "
             f"{os.cpu_count()} CPUs.", "",
             "| predict, batch 1 | Keras 3 `model(x)` µs | Keras 3 `predict_on_batch` µs | kerascpp `predict` µs | "
             "`model(x)` / kerascpp |", "|---|---|---|---|---|",
             f"| 2-layer LSTM(32), 40 steps | {us(k['lstm2_call'][0])} ({us(k['lstm2_call'][1])}) | "
             f"{us(k['lstm2_predict_on_batch'][0])} ({us(k['lstm2_predict_on_batch'][1])}) | "
             f"{us(c['lstm2_predict'][0])} ({us(c['lstm2_predict'][1])}) | "
             f"{k['lstm2_call'][0] / c['lstm2_predict'][0]:,.0f}x |", "",
             f"| predict, batch 1,024 in one call ({max(10, a.rounds // 10)} calls) | Keras 3 `predict_on_batch` ms | "
             "kerascpp `predict` ms | "
             "Keras / kerascpp |", "|---|---|---|---|"]
    for kind, label in (("lstm2", "2-layer LSTM(32), 40 steps (kerascpp: the inference plan)"),
                        ("bilstm", "Embedding(2000, 32, mask_zero) + Bidirectional(LSTM(32)), 40 steps, masked "
                                   "(kerascpp: the layers' loop)")):
        kk, cc = k[kind + "_1024"], c[kind + "_1024"]
        lines.append(f"| {label} | {kk[0] * 1e3:,.1f} ({kk[1] * 1e3:,.1f}) | {cc[0] * 1e3:,.1f} ({cc[1] * 1e3:,.1f}) | "
                     f"{kk[0] / cc[0]:,.1f}x |")
    lines += ["",
             "| one Dense(8) -> LSTM(8) step at batch 1 | streamed: one call per step, ns | "
             "inside a 1,000-step sequence, ns per step |",
             "|---|---|---|",
             f"| Keras 3 `predict_on_batch` | {k['lstm8_step'][0] * 1e9:,.0f} | "
             f"{k['lstm8_sequence'][0] / 1000 * 1e9:,.0f} |",
             f"| kerascpp (streamed: C++ `model({{x}}, states)`; sequence: Python `predict`) | "
             f"{c['lstm8_step'][0] * 1e9:,.0f} | {c['lstm8_sequence'][0] / 1000 * 1e9:,.0f} |",
             f"| kerascpp, C++ `call_into(x, y, &states)` (outputs made once: no allocation per call) | "
             f"{c['lstm8_step_into'][0] * 1e9:,.0f} | |",
             "| RTNeural (published, LSTM(8) one sample per call; not run here) | 142-148 | |", "",
             "| training epoch, 4,096 samples, batch 32, SGD momentum | Keras 3 s (later epochs) | "
             "kerascpp s (later epochs) | Keras / kerascpp | last loss Keras / kerascpp |", "|---|---|---|---|---|"]
    for kind, label in (("bilstm", "Embedding(2000, 32, mask_zero) + Bidirectional(LSTM(32)), 40 steps"),
                        ("gru", "GRU(32), 30 steps of 8 features"),
                        ("lstm2", "2-layer LSTM(32), 40 steps of 8 features (regressor)")):
        kt, ct = k[kind]["times"], c[kind]["times"]
        kl, cl = sum(kt[1:]) / max(1, len(kt) - 1), sum(ct[1:]) / max(1, len(ct) - 1)
        lines.append(f"| {label} | {kl:.2f} | {cl:.2f} | {kl / cl:.2f} | "
                     f"{k[kind]['losses'][-1]:.4f} / {c[kind]['losses'][-1]:.4f} |")
    body = "\n".join(lines)
    print(body)
    doc_sections.replace(a.doc, "sequences", body)


if __name__ == "__main__":
    main()
