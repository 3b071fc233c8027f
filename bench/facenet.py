"""The FaceNet that Keras users load (keras-facenet's Inception-ResNet-v1, 92 MB .h5 written by tf_keras,
20-odd Lambda layers): load time, kerascpp (Python package, load_model(safe_mode=False)) against tf_keras,
each in its own process on the same file (issue 17); writes the "facenet" section of docs/benchmarks.md.

    .venv/bin/python bench/facenet.py [--rounds 5]

tf_keras cannot load_model this file ("'str' object is not callable" in layer `normalize`), so its
column is how keras-facenet itself loads it: build the model in code, then load_weights.
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
import importlib.util, json, os, sys, time
import numpy as np
which, folder, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
path = os.path.join(folder, "facenet.h5")
def builder():
    loc = importlib.util.find_spec("keras_facenet").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location("irv1", os.path.join(loc, "inception_resnet_v1.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.InceptionResNetV1
times, out = [], {}
if which == "write":
    import tf_keras
    model = builder()(input_shape=(160, 160, 3), classes=128, dropout_keep_prob=0.8)
    x = np.random.default_rng(3).uniform(-1, 1, size=(1, 160, 160, 3)).astype("float32")
    np.save(os.path.join(folder, "x.npy"), x)
    np.save(os.path.join(folder, "y.npy"), model.predict(x, verbose=0))
    model.save(path)
elif which == "read":
    for _ in range(rounds):
        t = time.perf_counter(); open(path, "rb").read(); times.append(time.perf_counter() - t)
elif which == "kerascpp":
    import kerascpp as keras
    def l2(x, axis):
        return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), 1e-12))
    for _ in range(rounds):
        t = time.perf_counter()
        m = keras.models.load_model(path, safe_mode=False, custom_objects={"normalize": l2})
        times.append(time.perf_counter() - t)
    y = m.predict(np.load(os.path.join(folder, "x.npy")))
    ref = np.load(os.path.join(folder, "y.npy"))
    out["error_of_scale"] = float(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))
else:
    import tf_keras
    try:
        tf_keras.models.load_model(path, safe_mode=False)
    except Exception as e:
        out["load_model"] = type(e).__name__ + ": " + str(e).splitlines()[0][:120]
    build = builder()
    for _ in range(rounds):
        t = time.perf_counter()
        m = build(input_shape=(160, 160, 3), classes=128, dropout_keep_prob=0.8)
        m.load_weights(path)
        times.append(time.perf_counter() - t)
        tf_keras.backend.clear_session()
out["times"] = times
print("RESULT " + json.dumps(out))
"""


def child(which, folder, rounds):
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", CHILD, which, folder, str(rounds)], capture_output=True, text=True, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    if r.returncode or not line:
        sys.exit(f"{which} failed:\n{r.stderr[-3000:]}")
    return json.loads(line[0][7:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        child("write", folder, 1)
        size = os.path.getsize(os.path.join(folder, "facenet.h5"))
        read, ours, theirs = (child(w, folder, a.rounds) for w in ["read", "kerascpp", "tf_keras"])
    med = {k: statistics.median(r["times"]) for k, r in [("read", read), ("ours", ours), ("theirs", theirs)]}
    body = f"""## FaceNet load (issue 17)

keras-facenet's Inception-ResNet-v1 ({size / 1e6:.0f} MB `.h5`, random weights, written by tf_keras),
median of {a.rounds} loads, each tool in its own process, warm file cache (`make bench-facenet`).
tf_keras's `load_model` fails on the file (`{theirs.get("load_model", "loaded")}`), so its row is
keras-facenet's own way: build the model in code, then `load_weights`. kerascpp runs the 21 stored
`scaling` functions with `safe_mode=False` and the `normalize` layer with the function given in
`custom_objects` (the file keeps only TensorFlow's wrapper of `K.l2_normalize`); its embedding is
{ours["error_of_scale"]:.1e} of tf_keras's scale away.

| | seconds | x read time |
| --- | ---: | ---: |
| read the bytes | {med["read"]:.3f} | 1.0 |
| kerascpp `load_model` | {med["ours"]:.3f} | {med["ours"] / med["read"]:.1f} |
| tf_keras build + `load_weights` | {med["theirs"]:.3f} | {med["theirs"] / med["read"]:.1f} |

kerascpp is {med["theirs"] / med["ours"]:.1f}x faster than tf_keras here.
"""
    doc_sections.replace(a.doc, "facenet", body)
    print(body)


if __name__ == "__main__":
    main()
