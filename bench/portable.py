"""The portable build against a -march=native build of the same source (issue 13): the seed MLP's
predict at batch 1, ResNet50's predict at batch 1 and an MLP 784-128-10 training epoch, with the C++
bench_native of each build, run alternately (A B A B ...) in separate processes so that drift and
noise fall on both alike. Prints a markdown table (medians, min-max, portable / native) and puts it
into its section of docs/benchmarks.md (`make bench-portable`).

    .venv/bin/python bench/portable.py --portable build --native build-native [--rounds 5] [--no-write]

The native build is configured (cmake -DKERASCPP_MARCH_NATIVE=ON -DKERASCPP_TESTS=OFF) and both are
brought up to date (target bench_native); both builds' caches are checked to be what they claim.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def march_native(build):
    """KERASCPP_MARCH_NATIVE from a build folder's CMake cache (False when absent: the default)."""
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        return any(line.strip() == "KERASCPP_MARCH_NATIVE:BOOL=ON" for line in f)


def ensure_builds(portable, native):
    subprocess.run(["cmake", "-S", ROOT, "-B", native, "-DCMAKE_BUILD_TYPE=Release", "-DKERASCPP_MARCH_NATIVE=ON",
                    "-DKERASCPP_TESTS=OFF"], check=True, stdout=subprocess.DEVNULL)
    for build in (portable, native):
        subprocess.run(["cmake", "--build", build, "-j", str(os.cpu_count()), "--target", "bench_native"], check=True,
                       stdout=subprocess.DEVNULL)
    if march_native(portable) or not march_native(native):
        sys.exit(f"{portable} must be a default (portable) build and {native} a KERASCPP_MARCH_NATIVE=ON one")


def ensure_models(work):
    """The seed MLP (a fixture), ResNet50 (keras.applications, weights=None) and an MLP 784-128-10,
    written by Keras 3."""
    os.makedirs(work, exist_ok=True)
    resnet = os.path.join(work, "ResNet50", "model.keras")
    if not os.path.exists(resnet):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_applications_fixtures.py"), work,
                        "--models", "ResNet50"], check=True)
    mlp = os.path.join(work, "mlp_784_128_10.keras")
    if not os.path.exists(mlp):
        subprocess.run([sys.executable, "-c", f"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import keras
keras.utils.set_random_seed(0)
m = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                      keras.layers.Dense(10, activation="softmax")])
m.save({mlp!r})
"""], check=True)
    return {"seed": os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "keras3", "model.keras"),
            "resnet": resnet, "mlp": mlp}


# (row label, bench_native arguments, series, how many leading items to drop as warm-up)
def cases(models, quick):
    return [
        ("seed MLP `predict`, batch 1 (us)", ["predict", models["seed"], "1", "2000" if quick else "20000"], "predict", 0),
        ("seed MLP `predict`, batch 1,024 (us)", ["predict", models["seed"], "1024", "300" if quick else "3000"],
         "predict", 0),
        ("ResNet50 `predict`, batch 1 (ms)", ["predict", models["resnet"], "1", "3" if quick else "10"], "predict", 0),
        ("MLP 784-128-10 fit epoch, 60,000 samples (s)",
         ["fit", models["mlp"], "6000" if quick else "60000", "5"], "epoch", 1),
    ]


def run_one(build, args, series, skip, env=None):
    out = subprocess.run([os.path.join(build, "bench_native")] + args, check=True, capture_output=True, text=True,
                         env=dict(os.environ, **(env or {})))
    us = json.loads(out.stdout)["series"][series]["us"][skip:]
    return statistics.median(us)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--portable", default=os.path.join(ROOT, "build"))
    ap.add_argument("--native", default=os.path.join(ROOT, "build-native"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_portable"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS and OPENBLAS_NUM_THREADS of every run")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    a = ap.parse_args()
    ensure_builds(a.portable, a.native)
    models = ensure_models(a.work)
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    rows = []
    for label, args, series, skip in cases(models, a.quick):
        got = {"portable": [], "native": [], "baseline": []}
        for _ in range(a.rounds):
            for side, build, env in (("portable", a.portable, None), ("native", a.native, None),
                                     ("baseline", a.portable, {"KERASCPP_MAX_ISA": "baseline"})):
                got[side].append(run_one(build, args, series, skip, env))
        rows.append((label, got))
        print(label, {k: [round(v, 1) for v in vs] for k, vs in got.items()}, file=sys.stderr)
    scale = {"(us)": 1, "(ms)": 1e-3, "(s)": 1e-6}
    lines = ["## Portable build against -march=native (issue 13)", "",
             "`make bench-portable` (bench/portable.py): the default build (x86-64-v2, kerascpp's hot kernels "
             "chosen at run time per instruction set, oneDNN and OpenBLAS dispatching by themselves) against a "
             "`-DKERASCPP_MARCH_NATIVE=ON` build of the same source, each as `bench_native` in its own process, "
             f"alternating A B A B over {a.rounds} rounds; each round gives the median of its calls (epochs after "
             "the first for fit), the table the median of the rounds and their min-max; the ratio of those "
             "medians, and the median of the rounds' own ratios (each pair ran back to back). "
             "The last column is the portable build with its own kernels capped to the baseline set "
             "(`KERASCPP_MAX_ISA=baseline`: what a CPU without AVX2 runs; oneDNN and OpenBLAS still choose "
             "for this CPU).", "",
             f"- Machine: {cpu_model()}, {os.cpu_count()} cores; {a.threads} thread(s) (OMP_NUM_THREADS, "
             "OPENBLAS_NUM_THREADS).", "",
             "| | portable | native | portable / native: medians | per round (min-max) | "
             "portable, baseline kernels |", "|---|---|---|---|---|---|"]
    for label, got in rows:
        k = scale[label.rsplit(" ", 1)[1]]
        p, n = statistics.median(got["portable"]) * k, statistics.median(got["native"]) * k
        span = lambda v: f"{min(v) * k:.3g}-{max(v) * k:.3g}"
        ratios = [x / y for x, y in zip(got["portable"], got["native"])]
        lines.append(f"| {label} | {p:.3g} ({span(got['portable'])}) | {n:.3g} ({span(got['native'])}) | "
                     f"{p / n:.3f} | {statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
                     f"{statistics.median(got['baseline']) * k:.3g} |")
    print("\n".join(lines))
    if not a.no_write:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import doc_sections
        doc_sections.replace(os.path.join(ROOT, "docs", "benchmarks.md"), "portable", "\n".join(lines))

if __name__ == "__main__":
    main()
