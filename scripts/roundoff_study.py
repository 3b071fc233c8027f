#!/usr/bin/env python3
"""How large is legitimate float32 round-off in each fixture output? Measured against float64.

    .venv/bin/python scripts/roundoff_study.py [--only CASE ...] [--json /tmp/roundoff.json] [--variants]

Per fixture folder with input_0.npy and a full model file, a subprocess per writer (`import keras` for
keras3/, `import tf_keras` for the others) loads the writer's own file, predicts float32 here, and
predicts with a float64 twin: the config with every "float32" string (tf_keras dtypes, Keras 3
DTypePolicy names, InputLayer, nested models) made "float64", rebuilt by the model class's from_config,
with the weights cast to float64. Conv cases also get an abs twin (|weights|, |inputs|) that bounds
sum|terms|. kerascpp (PYTHONPATH=python) predicts in a subprocess per file, once its extension is built.

Columns, with y64 the float64 truth and scale = max|y64|: err_fixture = max|output_N.npy - y64| / scale;
err_here (TensorFlow float32 here) and err_kerascpp likewise; d_fix_here = max|fixture - here| / scale;
relmax_fix = max elementwise |fixture - y64| / |y64|; acc_eps = max |here - y64| / (eps32 * abs twin):
a few units for plain float32 accumulation, far more for Winograd or bf16. After a saturating activation
(tanh) scale is ~1 while the absolute error stays that of the pre-activation. --variants reruns
TensorFlow with TF_ENABLE_ONEDNN_OPTS=0 and with ONEDNN_MAX_CPU_ISA=AVX2 (columns err_<variant>).
"""
import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
EPS32 = 2.0 ** -24  # unit round-off of float32 (about 6e-8)
VARIANTS = {"onednn_off": {"TF_ENABLE_ONEDNN_OPTS": "0"}, "avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2"}}


def find_folders(only):
    """(case, folder, path, writer) for every folder holding input_0.npy and a full model file."""
    found = []
    for case in sorted(os.listdir(FIXTURES)):
        if only and case not in only or not os.path.isdir(os.path.join(FIXTURES, case)):
            continue
        for sub in sorted(os.listdir(os.path.join(FIXTURES, case))):
            path = os.path.join(FIXTURES, case, sub)
            if os.path.exists(os.path.join(path, "input_0.npy")) and any(
                    os.path.exists(os.path.join(path, f)) for f in ("model.keras", "model.h5")):
                found.append((case, sub, path, "keras3" if sub == "keras3" else "tf_keras"))
    return found


def numbered(path, prefix):
    files = []
    while os.path.exists(os.path.join(path, f"{prefix}_{len(files)}.npy")):
        files.append(np.load(os.path.join(path, f"{prefix}_{len(files)}.npy")))
    return files


def tag_of(path):
    return os.path.relpath(path, FIXTURES).replace(os.sep, "__")


# ------------------------------------------------------------------ TensorFlow worker (one writer)
def to_float64(obj, keep32=()):
    """Every "float32" string of a config becomes "float64", except in layers whose class is in keep32."""
    if isinstance(obj, dict):
        return obj if obj.get("class_name") in keep32 else {k: to_float64(v, keep32) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_float64(v, keep32) for v in obj]
    return "float64" if obj == "float32" else obj


def file_config(path):
    """The model config stored in the file (tf_keras's get_config can write unloadable functions)."""
    if path.endswith(".h5"):
        import h5py
        with h5py.File(path, "r") as f:
            return json.loads(f.attrs["model_config"])["config"]
    import zipfile
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("config.json"))["config"]


def leaves(layer):
    for sub in getattr(layer, "layers", None) or []:
        yield from leaves(sub)
    yield layer


def tf_worker(writer, tmp, paths):
    os.environ["KERAS_BACKEND"] = "tensorflow"
    custom, kw = {}, {}
    if writer == "keras3":
        import keras as K
        from keras.src.applications.convnext import LayerScale, StochasticDepth
        from keras.src.applications.inception_resnet_v2 import CustomScaleLayer
        custom = {c.__name__: c for c in (LayerScale, StochasticDepth, CustomScaleLayer)}
        order, kw, set_floatx = ("model.keras", "model.h5"), {"safe_mode": False}, K.config.set_floatx
    else:
        import tf_keras as K
        order, set_floatx = ("model.h5", "model.keras"), K.backend.set_floatx

    def run(model, xs, meta, dtype):
        xs = [x.astype(dtype) for x in xs]
        structure = meta.get("call_structure", "single" if len(xs) == 1 else "list")
        feed = xs[0] if structure == "single" and len(xs) == 1 else xs if structure != "dict" else \
            dict(zip([i["name"] for i in meta["inputs"]], xs))
        y = model.predict(feed, batch_size=len(xs[0]), verbose=0)
        if isinstance(y, dict):  # in meta's output order (the files' order), else sorted keys
            keys = [o["name"] for o in meta.get("outputs", [])]
            y = [y[k] for k in (keys if set(keys) == set(y) else sorted(y))]
        return [np.asarray(a) for a in (y if isinstance(y, (list, tuple)) else [y])]

    def twin_predict(model, configs, weights, xs, meta, st):
        """Rebuild in float64 and predict; st (keep32, jit, notes) carries the workarounds found."""
        while True:
            try:
                errors = []
                for cfg in configs:  # model.get_config(), then the config stored in the file
                    try:
                        cfg = copy.deepcopy(to_float64(cfg, st["keep32"]))  # from_config may consume it
                        twin = type(model).from_config(cfg, custom_objects=custom)
                        break
                    except Exception as e:  # noqa: BLE001
                        errors.append(e)
                else:
                    raise errors[0]
                if errors:
                    st["notes"].add(f"from_config(get_config()): {type(errors[0]).__name__}; used the file's")
                twin.set_weights(weights)
                for layer in leaves(twin):  # Keras 3 Normalization uses its weights after finalize_state
                    if hasattr(layer, "finalize_state") and layer is not twin:
                        layer.finalize_state()
                twin.jit_compile = st["jit"]
                return run(twin, xs, meta, "float64")
            except Exception as e:  # noqa: BLE001
                msg, m = str(e), re.search(r"\(type (\w+)\)|calling (\w+)\.call", str(e))
                cls = m and (m.group(1) or m.group(2))
                if "float64 not in list of allowed" in msg and cls and cls not in st["keep32"]:
                    st["keep32"].add(cls)  # the TF op takes no float64 at all (MaxPool3D): keep it float32
                    st["notes"].add(f"float64 twin keeps {cls} float32 (its TF op takes no float64)")
                elif "DT_DOUBLE" in msg and not st["jit"]:
                    st["jit"] = True  # no float64 TF CPU kernel (AvgPool3D), but XLA has one
                    st["notes"].add("float64 twin predicts under XLA (a TF CPU kernel lacks float64)")
                else:
                    raise RuntimeError(f"no float64 twin: {type(e).__name__}: {msg}") from e

    for path in paths:
        status, arrays = {"notes": []}, {}
        set_floatx("float32")
        K.backend.clear_session()
        try:
            with open(os.path.join(path, "meta.json")) as f:
                meta = json.load(f)
            xs = numbered(path, "input")
            for name in [n for n in order if os.path.exists(os.path.join(path, n))]:
                try:  # the writer's own full model file first, then the other
                    model = K.models.load_model(os.path.join(path, name), compile=False,
                                                custom_objects=custom, **kw)
                    status["file"] = name
                    break
                except Exception as e:  # noqa: BLE001
                    status["notes"].append(f"load {name}: {type(e).__name__}: {str(e)[:200]}")
            else:
                raise RuntimeError("no model file could be loaded")
            model.jit_compile = bool(meta.get("jit_compile")) or model.jit_compile
            arrays.update({f"tf32_{i}": y for i, y in enumerate(run(model, xs, meta, "float32"))})
            configs, weights = [model.get_config()], model.get_weights()
            try:
                configs.append(file_config(os.path.join(path, name)))
            except Exception:  # noqa: BLE001 - only a fallback
                pass
            twins = [("f64", [w.astype("float64") for w in weights], xs)]
            if "conv" in os.path.basename(os.path.dirname(path)):
                twins.append(("abs", [np.abs(w).astype("float64") for w in weights], [np.abs(x) for x in xs]))
            set_floatx("float64")
            st = {"keep32": set(), "jit": model.jit_compile, "notes": set()}
            try:
                for tag, ws, ins in twins:
                    ys = twin_predict(model, configs, ws, ins, meta, st)
                    arrays.update({f"{tag}_{i}": y for i, y in enumerate(ys)})
                    status["f32_outputs"] = [i for i, y in enumerate(ys) if y.dtype != np.float64]
                if status["f32_outputs"]:
                    st["notes"].add(f"float64 twin gives float32 outputs {status['f32_outputs']} "
                                    "(not in the summary)")
            finally:
                status["notes"] += sorted(st["notes"])
        except Exception as e:  # noqa: BLE001
            status["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        np.savez(os.path.join(tmp, tag_of(path) + ".npz"), **arrays)
        with open(os.path.join(tmp, tag_of(path) + ".json"), "w") as f:
            json.dump(status, f)
        print(f"[{writer}] {tag_of(path)}: {status.get('error', 'ok')}", flush=True)


def kc_worker(tmp, path, name):
    """kerascpp's predictions for one file (its own process: no TensorFlow loaded beside it)."""
    import kerascpp
    y = kerascpp.models.load_model(os.path.join(path, name), compile=False).predict(numbered(path, "input"))
    y = {f"kc_{i}": np.asarray(a) for i, a in enumerate(y if isinstance(y, (list, tuple)) else [y])}
    np.savez(os.path.join(tmp, tag_of(path) + ".kc.npz"), **y)


# ------------------------------------------------------------------ driver
def spawn(args, env_extra=None, kerascpp=False, timeout=1800):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", **(env_extra or {}))
    env.pop("TF_USE_LEGACY_KERAS", None)
    if kerascpp:
        env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable] + (args if args[0] == "-c" else [os.path.abspath(__file__)] + args)
    return subprocess.run(cmd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def run_tf(folders, tmp, env_extra=None):
    for writer in ("keras3", "tf_keras"):
        paths = [p for _, _, p, w in folders if w == writer]
        if paths:
            r = spawn(["--worker", "tf", "--writer", writer, "--tmp", tmp] + paths, env_extra)
            print("\n".join(line for line in r.stdout.splitlines() if line.startswith("[")), flush=True)
            if r.returncode:
                print(f"  {writer} worker exited {r.returncode}:\n{r.stdout[-2000:]}")


def load(path):
    return dict(np.load(path)) if os.path.exists(path) else {}


def rel(a, b, scale):
    if a is None or b is None or a.shape != b.shape:
        return None
    return float(np.max(np.abs(a.astype(np.float64) - b))) / scale


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", nargs="+", metavar="CASE")
    p.add_argument("--json", default="/tmp/roundoff.json")
    p.add_argument("--variants", action="store_true", help="also run TensorFlow with " + str(VARIANTS))
    p.add_argument("--top", type=int, default=40, help="rows of the table (all are in --json)")
    p.add_argument("--worker", choices=["tf", "kc"], help=argparse.SUPPRESS)
    p.add_argument("--writer", help=argparse.SUPPRESS)
    p.add_argument("--tmp", help=argparse.SUPPRESS)
    p.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return tf_worker(a.writer, a.tmp, a.paths) if a.worker == "tf" else kc_worker(a.tmp, *a.paths)

    def kerascpp_built():
        return spawn(["-c", "import kerascpp._kerascpp"], kerascpp=True).returncode == 0

    t0, folders = time.time(), find_folders(a.only)
    print(f"{len(folders)} fixture folders; kerascpp built now: {kerascpp_built()}")
    runs = {}
    for vname, env in [("", None)] + (list(VARIANTS.items()) if a.variants else []):
        runs[vname] = tempfile.mkdtemp(prefix=f"roundoff_{vname}")
        print(f"-- TensorFlow with {env or 'the default environment'}")
        run_tf(folders, runs[vname], env)
    tmp, has_kc = runs[""], kerascpp_built()  # asked again: `make test` may have built it meanwhile
    results, problems = [], []
    for case, sub, path, writer in folders:
        tag = tag_of(path)
        try:
            with open(os.path.join(tmp, tag + ".json")) as f:
                status = json.load(f)
        except OSError:
            status = {"error": "the TensorFlow worker wrote nothing (crashed?)"}
        got, kc = load(os.path.join(tmp, tag + ".npz")), {}
        problems += [f"{tag}: {n}" for n in status.get("notes", [])]
        problems += [f"{tag}: {status['error']}"] if "error" in status else []
        if has_kc and "file" in status:
            r = spawn(["--worker", "kc", "--tmp", tmp, path, status["file"]], kerascpp=True, timeout=600)
            kc = load(os.path.join(tmp, tag + ".kc.npz")) if r.returncode == 0 else {}
            if r.returncode:
                problems.append(f"{tag}: kerascpp: {(r.stdout.strip() or 'crashed')[-200:]}")
        variants = {v: load(os.path.join(d, tag + ".npz")) for v, d in runs.items() if v}
        for i, fixture in enumerate(numbered(path, "output")):
            y64, here, absum = got.get(f"f64_{i}"), got.get(f"tf32_{i}"), got.get(f"abs_{i}")
            row = {"case": case, "folder": sub, "writer": writer, "file": status.get("file"), "output": i,
                   "shape": list(fixture.shape), "truth_float32": i in status.get("f32_outputs", [])}
            results.append(row)
            if y64 is None or y64.shape != fixture.shape or fixture.size == 0:
                continue
            y64 = y64.astype(np.float64)
            mag = np.abs(y64)
            scale, nz = float(mag.max()) or 1.0, mag > 0
            row.update(scale=float(mag.max()), err_fixture=rel(fixture, y64, scale),
                       err_here=rel(here, y64, scale), d_fix_here=rel(fixture, here, scale),
                       relmax_fix=float(np.max(np.abs(fixture[nz] - y64[nz]) / mag[nz], initial=0.0)),
                       err_kerascpp=rel(kc.get(f"kc_{i}"), y64, scale))
            for v, arrays in variants.items():
                row[f"err_{v}"] = rel(arrays.get(f"tf32_{i}"), y64, scale)
            if absum is not None and here is not None:  # error in units of eps32 * sum|terms|
                ok = absum > 1e-30
                row["acc_eps"] = float(np.max(np.abs(here[ok] - y64[ok]) / absum[ok], initial=0)) / EPS32

    keys = ("err_fixture", "err_here", "err_kerascpp")
    results.sort(key=lambda r: max(r.get(k) or 0.0 for k in keys), reverse=True)
    cols = ["scale", *keys, "d_fix_here", "relmax_fix", "acc_eps"] + [f"err_{v}" for v in runs if v]
    print(f"\n{'case/folder:output (* = float32 truth)':46s}" + "".join(f"{c[:13]:>14s}" for c in cols))
    for r in results[:a.top]:
        name = f"{r['case']}/{r['folder']}:{r['output']}{'*' if r['truth_float32'] else ''}"
        print(f"{name:46s}" + "".join("{:>14s}".format("-" if r.get(c) is None else f"{r[c]:.2e}")
                                      for c in cols))
    summary = {}
    for key in keys:
        rows = [r for r in results if r.get(key) is not None and not r["truth_float32"]]
        if rows:
            top = max(rows, key=lambda r: r[key])
            summary[key] = {"max": top[key], "at": f"{top['case']}/{top['folder']}:output_{top['output']}",
                            "outputs": len(rows)}
    print("\nLargest error relative to the output's scale max|y64| (outputs with a float64 truth):")
    for key, s in summary.items():
        print(f"  {key:13s} {s['max']:.3e} at {s['at']} ({s['outputs']} outputs)")
    if not has_kc:
        print("  err_kerascpp: skipped, kerascpp's extension is not built (python/kerascpp/_kerascpp*.so)")
    print("\nProblems (loading, float64 twin, kerascpp):" if problems else "\nNo problems.")
    print("\n".join("  " + line for line in problems))
    with open(a.json, "w") as fh:
        json.dump({"summary": summary, "problems": problems, "kerascpp": has_kc, "results": results},
                  fh, indent=1)
    for d in runs.values():
        shutil.rmtree(d, ignore_errors=True)
    print(f"{len(results)} outputs; JSON: {a.json}; {time.time() - t0:.0f}s")


if __name__ == "__main__":
    sys.exit(main())
