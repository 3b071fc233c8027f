"""Baseline for `kerascpp bench-load`: real Keras loading N copies of one model file one after another,
all kept alive, in one process. Prints the same JSON keys as `kerascpp bench-load --json`.

    .venv/bin/python bench/keras_load_baseline.py tests/fixtures/seed_mlp_2x10/keras3/model.keras --copies 100
    .venv/bin/python bench/keras_load_baseline.py tests/fixtures/seed_mlp_2x10/tf_keras/model.h5 --tf-keras
"""
import argparse
import json
import os
import resource
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--copies", type=int, default=100)
    p.add_argument("--tf-keras", action="store_true", help="load with tf_keras (Keras 2) instead of Keras 3")
    a = p.parse_args()
    if a.tf_keras:
        import tf_keras as keras
    else:
        import keras
    keras.models.load_model(a.file, compile=False)  # warm-up: imports and first-use costs
    before = rss_kb()
    models, us = [], []
    for _ in range(a.copies):
        t0 = time.perf_counter()
        models.append(keras.models.load_model(a.file, compile=False))
        us.append((time.perf_counter() - t0) * 1e6)
    tenth = max(1, a.copies // 10)
    first, last = statistics.mean(us[:tenth]), statistics.mean(us[-tenth:])
    print(json.dumps({"copies": a.copies, "median_us": round(statistics.median(us), 1), "first10_us": round(first, 1),
                      "last10_us": round(last, 1), "ratio": round(last / first, 3), "rss_before_kb": before,
                      "rss_after_kb": rss_kb(), "keras": keras.__version__}))


if __name__ == "__main__":
    main()
