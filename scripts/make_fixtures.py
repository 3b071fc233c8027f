#!/usr/bin/env python3
"""Write kerascpp's test fixtures with real Keras.

    .venv/bin/python scripts/make_fixtures.py [--out tests/fixtures] [--only CASE ...]

Each writer (Keras 3 via `import keras`, tf-keras via `import tf_keras`) runs in its own
subprocess and writes tests/fixtures/<case>/<writer>/: the model in every form that writer saves,
input_i.npy / output_i.npy (the writer's own predictions) and meta.json. Every saved form is loaded
back by the same writer and checked against output_i.npy; a summary table is printed at the end.
Deterministic (seeded numpy RNG) and idempotent (each leaf folder is rewritten from scratch).
See tests/fixtures/README.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from fixtures.cases import CASES  # noqa: E402  (pure Python, imports no Keras)

ALL_CASES = list(CASES) + ["activations"]
WRITERS = ["keras3", "tf_keras"]


def child_env():
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONHASHSEED"] = "0"
    env["KERAS_BACKEND"] = "tensorflow"
    env.pop("TF_USE_LEGACY_KERAS", None)
    return env


def run_writer_here(args):
    from fixtures.runner import run
    rows = run(args.writer, args.out, args.only)
    with open(args.summary, "w") as f:
        json.dump(rows, f)


def fmt(d):
    return "-" if d is None else f"{d:.3g}"


def cross_writer(out, cases):
    """max |keras3 - tf_keras| per case over the files both wrote (same weights and inputs)."""
    import numpy as np
    lines = []
    for case in cases:
        a, b = (os.path.join(out, case, w) for w in WRITERS)
        if not (os.path.isdir(a) and os.path.isdir(b)):
            continue
        names = sorted(set(os.listdir(a)) & set(os.listdir(b)))
        ins = [n for n in names if n.startswith("input_") or n.startswith("x")]
        outs = [n for n in names if n.endswith(".npy") and n not in ins]
        same_in = all(np.array_equal(np.load(os.path.join(a, n)), np.load(os.path.join(b, n)))
                      for n in ins)
        diffs = []
        for n in outs:
            x, y = np.load(os.path.join(a, n)), np.load(os.path.join(b, n))
            d = float(np.max(np.abs(x - y))) if x.shape == y.shape else float("inf")
            diffs.append((d, n))
        big = [f"{n[:-4]}={d:.3g}" for d, n in diffs if d > 1e-5]
        worst = max(diffs)[0] if diffs else None
        lines.append(f"| {case} | {'yes' if same_in else 'NO'} | {fmt(worst)} | "
                     f"{', '.join(big) if big else ''} |")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures"))
    p.add_argument("--only", nargs="+", metavar="CASE", choices=ALL_CASES, default=None)
    p.add_argument("--writers", nargs="+", choices=WRITERS, default=WRITERS)
    p.add_argument("--writer", choices=WRITERS, help=argparse.SUPPRESS)   # internal: child mode
    p.add_argument("--summary", help=argparse.SUPPRESS)                   # internal: child result
    args = p.parse_args()
    args.out = os.path.abspath(args.out)
    args.only = args.only or ALL_CASES
    if args.writer:
        return run_writer_here(args)

    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="make_fixtures_")
    procs = {}
    for w in args.writers:  # the writers run side by side, each in its own process
        cmd = [sys.executable, os.path.abspath(__file__), "--writer", w, "--out", args.out,
               "--summary", os.path.join(tmp, f"{w}.json"), "--only", *args.only]
        log = open(os.path.join(tmp, f"{w}.log"), "w")
        procs[w] = (subprocess.Popen(cmd, env=child_env(), stdout=log, stderr=subprocess.STDOUT), log)
    rows, failed = [], []
    for w, (proc, log) in procs.items():
        rc = proc.wait()
        log.close()
        with open(os.path.join(tmp, f"{w}.log")) as f:
            text = f.read()
        progress = [ln for ln in text.splitlines() if ln.startswith(f"[{w}]")]
        print("\n".join(progress))
        summary = os.path.join(tmp, f"{w}.json")
        if rc != 0 or not os.path.exists(summary):
            failed.append(w)
            print(f"--- writer {w} exited with {rc}; log tail:\n" + "\n".join(text.splitlines()[-40:]))
            continue
        with open(summary) as f:
            rows += json.load(f)

    print("\n| case | writer | form | max abs diff (reloaded vs saved outputs) | status |")
    print("| --- | --- | --- | --- | --- |")
    for case, w, form, d, status in rows:
        print(f"| {case} | {w} | {form} | {fmt(d)} | {status} |")
    if len(args.writers) == 2:
        print("\n| case | same inputs | max abs diff keras3 vs tf_keras outputs | files over 1e-5 |")
        print("| --- | --- | --- | --- |")
        print("\n".join(cross_writer(args.out, args.only)))
    bad = [r for r in rows if r[4] not in ("ok",) and not r[4].endswith("arrays")]
    print(f"\n{len(rows)} rows, {len(bad)} not ok, writers failed: {failed or 'none'}; "
          f"{time.time() - t0:.1f}s; logs in {tmp}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
