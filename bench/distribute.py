"""Data-parallel training on one machine (issue 22): samples per second of fit with 1, 2 (and more)
worker processes started by kerascpp.distribute.launch, Gloo over TCP on 127.0.0.1, and the all-reduce
cost per megabyte. The threads of the machine are shared between its workers (the launcher's
KERASCPP_NUM_THREADS), so on one machine more workers do not add cores: the row shows the overhead of
splitting, not the gain of more machines.

    PYTHONPATH=python .venv/bin/python bench/distribute.py [--workers 1 2] [--epochs 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_sections  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import kerascpp as keras
    out, epochs, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    strategy = keras.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    x = rng.random((60000, 784), dtype=np.float32)
    y = rng.integers(0, 10, 60000)
    with strategy.scope():
        inputs = keras.Input((784,))
        h = keras.layers.Dense(128, activation="relu")(inputs)
        model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(h))
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    times = []

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t)

    model.fit(x, y, batch_size=batch, epochs=epochs, verbose=0, callbacks=[Timer()])
    reduce = {}
    ctx = strategy._context
    if ctx is not None:
        for mb in (1, 4, 16, 64):
            a = np.ones(mb * 262144, np.float32)
            ctx.all_reduce_sum(a)  # warm
            t = time.perf_counter()
            for _ in range(5):
                ctx.all_reduce_sum(a)
            reduce[mb] = (time.perf_counter() - t) / 5
    if strategy.is_chief:
        json.dump({"epoch_s": times, "reduce_s": reduce}, open(out, "w"))
""")


def run(workers, epochs, batch):
    with tempfile.TemporaryDirectory() as d:
        script, out = os.path.join(d, "w.py"), os.path.join(d, "out.json")
        open(script, "w").write(WORKER)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        subprocess.run([sys.executable, "-m", "kerascpp.distribute.launch", "--nproc", str(workers), script, out,
                        str(epochs), str(batch)], env=env, check=True)
        return json.load(open(out))


ACROSS_MACHINES = """Across machines the same all-reduce moves about 2(N-1)/N of the gradients' bytes through each
worker's link per step (Gloo's ring): ResNet50's 100 MB of gradients take about 0.16 s on 10 Gb/s
Ethernet and 1.6 s on 1 Gb/s, against a training step of several seconds on 2 cores; the latency of
each exchange (tens of microseconds on a LAN) matters for small models at small batches, where a larger
global batch hides it. Here the workers share the machine's cores, so the rows show what splitting
costs, not what a second machine gives."""


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, nargs="+", default=[256, 2048])
    p.add_argument("--doc", default=None, help="write the tables into this page's `distribute` section")
    a = p.parse_args()
    lines = ["## Data-parallel training (issue 22)", "",
             f"`make bench-distribute` (bench/distribute.py), {time.strftime('%Y-%m-%d')}, {cpu_name()}, "
             f"{os.cpu_count()} cores shared by the workers (the launcher gives each cores / workers threads). "
             "fit of an MLP 784-128-10 on 60,000 samples, Adam, by worker processes that "
             "`kerascpp.distribute.launch` starts, Gloo over TCP on 127.0.0.1:", "",
             "| global batch | workers | s / epoch (median after the first) | samples / s | vs 1 worker |",
             "|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    reduce = None
    for batch in a.batch:
        base = None
        for n in a.workers:
            r = run(n, a.epochs, batch)
            later = r["epoch_s"][1:] or r["epoch_s"]
            s = sorted(later)[len(later) // 2]
            base = base or s
            lines.append(f"| {batch} | {n} | {s:.3f} | {60000 / s:,.0f} | {base / s:.2f}x |")
            print(lines[-1], flush=True)
            reduce = r["reduce_s"] or reduce
    tail = [""]
    if reduce:
        tail += ["All-reduce (sum, float32) on 2 workers over TCP on 127.0.0.1, mean of 5:", "",
                 "| MB | ms | ms / MB |", "|---|---|---|"]
        tail += [f"| {mb} | {t * 1e3:.2f} | {t * 1e3 / float(mb):.2f} |" for mb, t in reduce.items()]
        tail.append("")
    tail.append(ACROSS_MACHINES)
    print("\n".join(tail))
    lines += tail
    if a.doc:
        doc_sections.replace(a.doc, "distribute", "\n".join(lines))


if __name__ == "__main__":
    main()
