"""Memory while loading (issue 19): the peak RSS a load adds, against the file's size and the bytes of
the weights it holds, for kerascpp and for Keras 3 side by side. Each load runs in a fresh child
process that first loads a tiny model (so that imports and one-time set-up are not counted), then
reads getrusage's peak RSS before and after load_model(path, compile=False). The files are real Keras
files: keras.applications models (weights=None: random weights, the same
bytes) saved by Keras 3 as .keras and .h5 (the seed MLP loads within the warm-up's peak). kerascpp is measured as it loads by default (.h5 paths over
512 KiB read on demand through libhdf5) and with allow_libhdf5=False (every file read whole by its
own reader), the setting for files from untrusted sources.

    .venv/bin/python bench/load_memory.py [--models ResNet50,MobileNetV2] [--out build/load_memory.md]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SEED = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "keras3")

CHILD = r"""
import json, os, resource, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
side, path, seed, opts = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if side == "kerascpp":
    sys.path.insert(0, os.path.join(sys.argv[5], "python"))
    import kerascpp as keras
else:
    import keras
keras.models.load_model(os.path.join(seed, "model.keras"), compile=False)  # imports, pools, first-use set-up
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB, the process's high-water mark
before = peak()
m = keras.models.load_model(path, compile=False, **opts)
after = peak()
weights = sum(int(w.numpy().nbytes) if hasattr(w, "numpy") else int(w.nbytes) for w in m.get_weights())
print(json.dumps({"added_kib": after - before, "weight_bytes": weights}))
"""


def measure(side, path, opts=None):
    """The child's figures, or None with the reason printed when the load fails (Keras 3 cannot load
    every legacy .h5 that Keras writes: InceptionResNetV2's is one)."""
    out = subprocess.run([sys.executable, "-c", CHILD, side, path, SEED, json.dumps(opts or {}), ROOT],
                         capture_output=True, text=True)
    if out.returncode != 0:
        if side == "kerascpp":
            raise RuntimeError(f"kerascpp failed to load {path}:\n{out.stderr}")
        print(f"{side} cannot load {path}: {(out.stderr.strip().splitlines() or ['?'])[-1][:300]}", flush=True)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_files(names, folder):
    """(label, path) of each model as .keras and .h5, written by Keras 3."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    files = []
    script = (
        "import sys, keras\n"
        "name, folder = sys.argv[1], sys.argv[2]\n"
        "m = getattr(keras.applications, name)(weights=None)\n"
        "m.save(f'{folder}/{name}.keras'); m.save(f'{folder}/{name}.h5')\n")
    for name in names:
        subprocess.run([sys.executable, "-c", script, name, folder], check=True, capture_output=True)
        files += [(name, os.path.join(folder, f"{name}.keras")), (name, os.path.join(folder, f"{name}.h5"))]
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="MobileNetV2,ResNet50,InceptionResNetV2,VGG16")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "load_memory.md"))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, path in make_files([n for n in args.models.split(",") if n], folder):
            size = os.path.getsize(path)
            ours = measure("kerascpp", path)
            strict = measure("kerascpp", path, {"allow_libhdf5": False})
            theirs = measure("keras3", path)
            base = size + ours["weight_bytes"]
            rows.append((label, os.path.splitext(path)[1], size, ours["weight_bytes"], ours["added_kib"],
                         strict["added_kib"], theirs and theirs["added_kib"], base))
            print(rows[-1], flush=True)
    mib = lambda b: f"{b / 2**20:.1f}"
    lines = ["| model | form | file MiB | weights MiB | kerascpp peak added MiB (x file + weights) | "
             "allow_libhdf5=False (x) | Keras 3 (x) | Keras 3 / kerascpp |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, form, size, weights, ours, strict, theirs, base in rows:
        x = lambda kib: f"{kib * 1024 / base:.2f}"
        keras3 = (f"{mib(theirs * 1024)} ({x(theirs)}) | {theirs / max(ours, 1):.1f}" if theirs is not None
                  else "fails to load | -")
        lines.append(f"| {label} | {form} | {mib(size)} | {mib(weights)} | {mib(ours * 1024)} ({x(ours)}) | "
                     f"{mib(strict * 1024)} ({x(strict)}) | {keras3} |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
