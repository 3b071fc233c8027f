"""`make bench`: kerascpp (C++ and Python) side by side with real Keras (Keras 3 on TensorFlow, and
tf-keras) and ONNX Runtime, in one run on one machine, on the same files. Writes docs/benchmarks.md and
PNG plots beside it (bench/report.py) and the raw per-item times as JSON.

    .venv/bin/python bench/run_all.py --build build            # the full run (about 10 minutes here)
    .venv/bin/python bench/run_all.py --build build --quick --out /tmp/b   # tiny counts: a smoke run

The seed's scenarios (issue 7): many loads kept alive, with and without clear_session; many weight
reads; an 89 MB model against the time to read its bytes; predict at batch 1 and 1,024.
Every measurement of many loads gets a fresh process; the rest share one process per implementation.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10")
# The seed's four files, each with the Keras that wrote it (the baseline that loads it).
SEED_FILES = {"keras3/model.keras": "keras3", "keras3/model.h5": "keras3",
              "tf_keras/model.h5": "tf_keras", "tf_keras/model.keras": "tf_keras"}

FULL = dict(copies=[30, 1000], calls=[100, 100000], keras_load_budget_s=180.0, keras_budget_s=20.0, big_mb=89, big_repeats=5,
            read_repeats=20, predict_calls=2000, keras_predict_calls=300, keras_predict_budget_s=15.0)
QUICK = dict(copies=[3], calls=[20], keras_load_budget_s=30.0, keras_budget_s=2.0, big_mb=1, big_repeats=2, read_repeats=2,
             predict_calls=10, keras_predict_calls=5, keras_predict_budget_s=2.0)


def plan(cfg, work):
    """(impl, job) pairs in the order they run. Writers first: the others read what they write."""
    big = os.path.join(work, "big")
    onnx = os.path.join(work, "seed_mlp.onnx")
    jobs = [("keras3", {"kind": "make_big", "dir": big, "mb": cfg["big_mb"], "formats": ["keras", "h5"]}),
            ("keras3", {"kind": "export_onnx", "file": os.path.join(SEED, "keras3/model.keras"), "out": onnx}),
            ("tf_keras", {"kind": "make_big", "dir": big, "mb": cfg["big_mb"], "formats": ["h5"]})]
    for n in cfg["copies"]:
        for rel, writer in SEED_FILES.items():
            f = os.path.join(SEED, rel)
            jobs.append((writer, {"kind": "load", "file": f, "n": n, "budget_s": cfg["keras_load_budget_s"]}))
            jobs += [(impl, {"kind": "load", "file": f, "n": n}) for impl in ("native", "kerascpp")]
    for rel in ("keras3/model.keras", "tf_keras/model.h5"):  # Keras with clear_session between loads
        jobs.append((SEED_FILES[rel], {"kind": "load", "file": os.path.join(SEED, rel), "n": max(cfg["copies"]),
                                       "clear": True, "budget_s": cfg["keras_load_budget_s"]}))
    kernel_file = os.path.join(SEED, "keras3/model.keras")
    for n in cfg["calls"]:
        for impl, budget in (("keras3", cfg["keras_budget_s"]), ("tf_keras", cfg["keras_budget_s"]),
                             ("native", None), ("kerascpp", None)):
            f = kernel_file if impl != "tf_keras" else os.path.join(SEED, "tf_keras/model.h5")
            jobs.append((impl, {"kind": "weights", "file": f, "n": n, "budget_s": budget}))
    bigs = {"keras3": ["big_keras3.keras", "big_keras3.h5"], "tf_keras": ["big_tf_keras.h5"],
            "native": ["big_keras3.keras", "big_keras3.h5", "big_tf_keras.h5"],
            "kerascpp": ["big_keras3.keras", "big_keras3.h5", "big_tf_keras.h5"]}
    for impl, names in bigs.items():
        for name in names:
            jobs.append((impl, {"kind": "big", "file": os.path.join(big, name), "n": cfg["big_repeats"]}))
    for name in bigs["native"]:
        jobs.append(("native", {"kind": "read", "file": os.path.join(big, name), "n": cfg["read_repeats"]}))
        jobs.append(("cat", {"kind": "cat", "file": os.path.join(big, name), "n": cfg["read_repeats"]}))
    for batch in (1, 1024):
        for impl in ("keras3", "tf_keras", "native", "kerascpp", "onnxruntime"):
            keras = impl in ("keras3", "tf_keras")
            f = {"onnxruntime": onnx, "tf_keras": os.path.join(SEED, "tf_keras/model.h5")}.get(
                impl, os.path.join(SEED, "keras3/model.keras"))
            jobs.append((impl, {"kind": "predict", "file": f, "batch": batch,
                                "n": cfg["keras_predict_calls"] if keras else cfg["predict_calls"],
                                "budget_s": cfg["keras_predict_budget_s"] if keras else None}))
    # Keras first: its jobs take most of the run, and none of them needs the C++ build.
    return sorted(jobs, key=lambda ij: ij[0] not in ("keras3", "tf_keras"))


def run_native(build, job, env):
    exe = os.path.join(build, "bench_native")
    args = [exe, job["kind"], job["file"]] + ([str(job["batch"])] if job["kind"] == "predict" else []) + [str(job["n"])]
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    return [dict(json.loads(out), impl="native", job=job)]


def run_cat(job, env):
    """`cat FILE > /dev/null` from the page cache, process start included (what a shell user sees)."""
    subprocess.run(["cat", job["file"]], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    us = []
    for _ in range(job["n"]):
        t0 = time.perf_counter()
        subprocess.run(["cat", job["file"]], stdout=subprocess.DEVNULL, check=True)
        us.append((time.perf_counter() - t0) * 1e6)
    return [{"impl": "cat", "job": job, "series": {"cat": {"us": us, "rss_before_kb": 0, "rss_after_kb": 0}}}]


def run_python(impl, jobs, args, env):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    cmd = [sys.executable, os.path.join(HERE, "py_side.py"), impl, "--threads", str(args.threads),
           "--jobs", json.dumps(jobs), "--out", out]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{impl} failed on {[j['kind'] for j in jobs]}:\n{proc.stderr[-3000:]}")
    with open(out) as f:
        res = json.load(f)
    os.unlink(out)
    return res


def batches(jobs, quick):
    """Groups (impl, job) pairs into processes, in order of first appearance (writers come first).
    A full run gives each measurement of many loads a fresh process and the writers their own; the
    other jobs of one implementation share one. A quick run uses one process per implementation:
    each import of TensorFlow costs seconds."""
    groups = {}
    for i, (impl, job) in enumerate(jobs):
        if impl in ("native", "cat") or (job["kind"] == "load" and not quick):
            key = i
        elif quick:
            key = impl
        else:
            key = (impl, job["kind"] in ("make_big", "export_onnx"))
        groups.setdefault(key, (impl, []))[1].append(job)
    return list(groups.values())


def machine(threads):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1), "os": platform.platform(),
            "python": platform.python_version(), "threads": threads, "load_avg": os.getloadavg()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="the CMake build folder (bench_native)")
    p.add_argument("--out", default=os.path.join(ROOT, "docs"), help="where benchmarks.md and the PNGs go")
    p.add_argument("--work", default=None, help="where the big model files go (default BUILD/bench_work)")
    p.add_argument("--quick", action="store_true", help="tiny counts: checks that everything runs")
    p.add_argument("--threads", type=int, default=1, help="threads for every side (TF, OpenBLAS, ORT)")
    p.add_argument("--report-only", action="store_true", help="rewrite the doc from WORK/results.json")
    p.add_argument("--keras-load-budget", type=float, help="seconds a Keras run of many loads may take "
                   f"(default {FULL['keras_load_budget_s']:.0f}; a busy machine needs less to finish in time)")
    args = p.parse_args()
    cfg = dict(QUICK if args.quick else FULL)
    if args.keras_load_budget:
        cfg["keras_load_budget_s"] = args.keras_load_budget
    work = args.work or os.path.join(args.build, "bench_work")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads),
               TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=os.path.join(ROOT, "python"))
    if args.report_only:  # redraw the doc from the last run's raw times
        with open(os.path.join(work, "results.json")) as f:
            raw = json.load(f)
        return write_report(raw["meta"], raw["results"], args.out)
    start = time.perf_counter()
    results = []
    for impl, jobs in batches(plan(cfg, work), args.quick):
        t0 = time.perf_counter()
        try:
            if impl == "native":
                results += run_native(args.build, jobs[0], env)
            elif impl == "cat":
                results += run_cat(jobs[0], env)
            else:
                results += run_python(impl, jobs, args, env)
        except (RuntimeError, subprocess.CalledProcessError) as e:  # reported in the doc, the run goes on
            err = getattr(e, "stderr", None) or str(e)
            print(f"  FAILED: {err[-2000:]}", flush=True)
            results += [{"impl": impl, "job": j, "error": err[-2000:]} for j in jobs]
        print(f"[{time.perf_counter() - start:6.0f} s] {impl:11s} {', '.join(j['kind'] for j in jobs)[:60]}"
              f" ({time.perf_counter() - t0:.1f} s)", flush=True)
    meta = {"machine": machine(args.threads), "config": cfg, "quick": args.quick,
            "wall_s": round(time.perf_counter() - start, 1), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f)
    write_report(meta, results, args.out)


def write_report(meta, results, out):
    sys.path.insert(0, HERE)
    import report
    report.write(meta, results, out, seed_root=SEED, root=ROOT)
    print(f"wrote {os.path.join(out, 'benchmarks.md')} (the run took {meta['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
