"""Turns the per-item times of bench/run_all.py into docs/benchmarks.md and PNG plots beside it.
Every number is computed here from the raw series: median, min and max over the items (loads, calls,
repeats), the mean of the first and the last 10% and their ratio, and RSS growth."""
import os
import statistics

import doc_sections

LABEL = {"keras3": "Keras 3", "tf_keras": "tf-keras", "native": "kerascpp C++", "kerascpp": "kerascpp Python",
         "onnxruntime": "ONNX Runtime", "cat": "cat"}
COLOR = {"keras3": "tab:red", "tf_keras": "tab:orange", "native": "tab:blue", "kerascpp": "tab:green",
         "onnxruntime": "tab:purple"}


def stats(series):
    us = series["us"]
    n, tenth = len(us), max(1, len(us) // 10)
    first, last = statistics.fmean(us[:tenth]), statistics.fmean(us[-tenth:])
    return {"n": n, "median": statistics.median(us), "min": min(us), "max": max(us), "total": sum(us),
            "first": first, "last": last, "ratio": last / first if first else float("nan"),
            "rss_kb": series["rss_after_kb"] - series["rss_before_kb"]}


def t(us):
    """A time in us, in the unit that reads best."""
    if us != us:
        return "-"
    if us < 1:
        return f"{us * 1000:.0f} ns"
    if us < 1000:
        return f"{us:.3g} us"
    if us < 1e6:
        return f"{us / 1000:.3g} ms"
    return f"{us / 1e6:.3g} s"


def kb(v):
    return f"{v / 1024:+.1f} MB" if abs(v) >= 1024 else f"{v:+d} kB"


def x(ratio):
    return "-" if ratio != ratio else (f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2g}x")


def short(path, seed_root):
    return os.path.relpath(path, seed_root) if path.startswith(seed_root) else os.path.basename(path)


def find(results, impl=None, **job):
    return [r for r in results if (impl is None or r["impl"] == impl) and "series" in r
            and all(r["job"].get(k) == v for k, v in job.items())]


def one(results, impl, name, **job):
    rs = find(results, impl, **job)
    return stats(rs[0]["series"][name]) if rs and name in rs[0]["series"] else None


def section_loads(results, seed_root, out, cfg):
    lines = ["## 1. Many models: loading copies of the seed MLP one after another, all kept alive", "",
             "Per-model times are over the loads of one run (each run is a fresh process; one warm-up "
             "load before it, not kept). *Keras / this*: the per-model median of the Keras that wrote the "
             f"file, divided by this loader's. A Keras run stops after {cfg['keras_load_budget_s']:.0f} s "
             "(*copies* then says how many it loaded).", "",
             "| loader | file | copies | total | median | min | max | first 10% | last 10% | last / first | "
             "RSS growth | RSS per model | Keras / this |", "|" + "---|" * 13]
    loads = [r for r in find(results, kind="load") if not r["job"].get("clear")]
    for r in sorted(loads, key=lambda r: (r["job"]["n"], r["job"]["file"], list(LABEL).index(r["impl"]))):
        s = stats(r["series"]["load"])
        base = [b for b in loads if b["impl"] in ("keras3", "tf_keras") and b["job"]["file"] == r["job"]["file"]
                and b["job"]["n"] == r["job"]["n"]]
        ratio = stats(base[0]["series"]["load"])["median"] / s["median"] if base else float("nan")
        copies = f"{s['n']:,}" + ("" if s["n"] == r["job"]["n"] else f" of {r['job']['n']:,}")
        lines.append(f"| {LABEL[r['impl']]} | `{short(r['job']['file'], seed_root)}` | {copies} | {t(s['total'])} | "
                     f"{t(s['median'])} | {t(s['min'])} | {t(s['max'])} | {t(s['first'])} | {t(s['last'])} | "
                     f"{s['ratio']:.2f} | {kb(s['rss_kb'])} | {s['rss_kb'] / s['n']:.0f} kB | {x(ratio)} |")
    lines += ["", "![per-model load time against model index](bench_load.png)", "",
              "### Keras with `clear_session()` before each load", "",
              "Does clearing the session keep loading flat, and do the models loaded before still work? After "
              "all the loads, the first model predicts the fixture's input and is compared with Keras's saved "
              "output (1e-5).", "",
              "| loader | file | copies | median | first 10% | last 10% | last / first | RSS per model | "
              "first model still predicts |", "|" + "---|" * 9]
    for r in [r for r in find(results, kind="load") if r["job"].get("clear")]:
        s = stats(r["series"]["load"])
        ok = "yes" if r.get("first_model_predicts") else "**no**"
        copies = f"{s['n']:,}" + ("" if s["n"] == r["job"]["n"] else f" of {r['job']['n']:,}")
        lines.append(f"| {LABEL[r['impl']]} + clear_session | `{short(r['job']['file'], seed_root)}` | {copies} | "
                     f"{t(s['median'])} | {t(s['first'])} | {t(s['last'])} | {s['ratio']:.2f} | "
                     f"{s['rss_kb'] / s['n']:.0f} kB | {ok} ({r.get('first_model_error', '')}) |")
    broken = [r for r in loads if not r.get("first_model_predicts", True)]
    lines += ["", "Without clear_session, the first model predicted correctly after all loads in every run"
              + ("." if not broken else f" except: {', '.join(LABEL[r['impl']] for r in broken)}.")]
    plot_loads(results, seed_root, os.path.join(out, "bench_load.png"))
    return lines


def plot_loads(results, seed_root, path):
    import matplotlib.pyplot as plt
    n = max(r["job"]["n"] for r in find(results, kind="load"))
    files = ["keras3/model.keras", "tf_keras/model.h5"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, rel in zip(axes, files):
        for r in find(results, kind="load", n=n):
            if short(r["job"]["file"], seed_root) != rel:
                continue
            label = LABEL[r["impl"]] + (" + clear_session" if r["job"].get("clear") else "")
            ms = [v / 1000 for v in r["series"]["load"]["us"]]
            ax.plot(range(1, len(ms) + 1), ms, lw=0.8, ls="--" if r["job"].get("clear") else "-",
                    color=COLOR[r["impl"]], label=label)
        ax.set(yscale="log", title=f"{n:,} loads of {rel}, all kept alive", xlabel="model index",
               ylabel="load time (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def section_weights(results, out, cfg):
    lines = ["## 2. Weight reads: get_value on a kernel, get_weights, batch_get_value", "",
             "The seed MLP's first kernel (8 x 10) and its 6 variables. Keras 3 has no `keras.backend.get_value`: "
             "its column is `keras.ops.convert_to_numpy(v)` (what replaces it) and a list of those for "
             "batch_get_value; tf-keras uses `tf_keras.backend.get_value` / `batch_get_value`. "
             f"Keras loops stop after {cfg['keras_budget_s']:.0f} s; *calls* says how many ran.", "",
             "| implementation | call | calls | median | min | max | first 10% | last 10% | last / first | "
             "RSS growth | Keras 3 / this |", "|" + "---|" * 11]
    for n in sorted({r["job"]["n"] for r in find(results, kind="weights")}):
        for name in ("get_value", "get_weights", "batch_get_value"):
            base = one(results, "keras3", name, kind="weights", n=n)
            for impl in ("keras3", "tf_keras", "native", "kerascpp"):
                s = one(results, impl, name, kind="weights", n=n)
                if s is None:
                    continue
                calls = f"{s['n']:,}" + ("" if s["n"] == n else f" of {n:,}")
                ratio = base["median"] / s["median"] if base else float("nan")
                lines.append(f"| {LABEL[impl]} | {name} | {calls} | {t(s['median'])} | {t(s['min'])} | {t(s['max'])} | "
                             f"{t(s['first'])} | {t(s['last'])} | {s['ratio']:.2f} | {kb(s['rss_kb'])} | {x(ratio)} |")
    lines += ["", "![per-call time against call index](bench_weights.png)"]
    plot_weights(results, os.path.join(out, "bench_weights.png"))
    return lines


def plot_weights(results, path):
    import matplotlib.pyplot as plt
    n = max(r["job"]["n"] for r in find(results, kind="weights"))
    names = ("get_value", "get_weights", "batch_get_value")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), sharey=True)
    for ax, name in zip(axes, names):
        for r in find(results, kind="weights", n=n):
            us = r["series"][name]["us"]
            step = max(1, len(us) // 200)  # median of each bin: 100,000 raw points are unreadable
            xs = list(range(0, len(us) - step + 1, step))
            ax.plot([i + step / 2 for i in xs], [statistics.median(us[i:i + step]) for i in xs], lw=1,
                    color=COLOR[r["impl"]], label=LABEL[r["impl"]])
        ax.set(yscale="log", title=f"{name}, {n:,} calls (median per {max(1, n // 200):,} calls)",
               xlabel="call index", ylabel="time per call (us)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def section_big(results, out):
    bigs = find(results, kind="big")
    if not bigs:
        return []
    lines = ["## 3. A big model: load time against the time to read its bytes", "",
             "A Sequential stack of Dense layers with about as many float32 weights as FaceNet's 89 MB `.h5` "
             "(written at bench time by the Keras named in the file, never committed). *cat*: `cat FILE > "
             "/dev/null` from the page cache, process start included; *read*: one `read` of the whole file into "
             "a buffer in C++. Median (min - max) over the repeats, after one warm-up load.", "",
             "| file | size | cat | read | loader | load | load / read |", "|" + "---|" * 7]
    for f in sorted({r["job"]["file"] for r in bigs}):
        size = os.path.getsize(f) if os.path.exists(f) else 0
        rd, cat = one(results, "native", "read", kind="read", file=f), one(results, "cat", "cat", kind="cat", file=f)
        for impl in ("keras3", "tf_keras", "native", "kerascpp"):
            s = one(results, impl, "load", kind="big", file=f)
            if s is None:
                continue
            lines.append(f"| `{os.path.basename(f)}` | {size / 1e6:.1f} MB | {t(cat['median']) if cat else '-'} | "
                         f"{t(rd['median']) if rd else '-'} | {LABEL[impl]} | {t(s['median'])} ({t(s['min'])} - "
                         f"{t(s['max'])}) | {x(s['median'] / rd['median']) if rd else '-'} |")
    return lines


def section_predict(results, out):
    lines = ["## 4. predict on the seed MLP, and 5. ONNX Runtime", "",
             "Latency of one call on one (batch, 8) float32 input, after 5 warm-up calls. `predict` is given "
             "`batch_size` equal to the batch (one step); *call* is `model(x)` (Keras's `__call__`, the "
             "C++ `operator()`); ONNX Runtime runs the file that Keras 3's own `model.export(format=\"onnx\")` "
             "wrote (tf2onnx underneath).", "",
             "| batch | implementation | call | calls | median | min | max | Keras 3 predict / this |", "|" + "---|" * 8]
    for batch in sorted({r["job"]["batch"] for r in find(results, kind="predict")}):
        base = one(results, "keras3", "predict", kind="predict", batch=batch)
        for impl in ("keras3", "tf_keras", "native", "kerascpp", "onnxruntime"):
            rs = find(results, impl, kind="predict", batch=batch)
            for name in (rs[0]["series"] if rs else []):
                s = stats(rs[0]["series"][name])
                ratio = base["median"] / s["median"] if base else float("nan")
                lines.append(f"| {batch:,} | {LABEL[impl]} | {name} | {s['n']:,} | {t(s['median'])} | {t(s['min'])} | "
                             f"{t(s['max'])} | {x(ratio)} |")
    lines += ["", "![predict latency](bench_predict.png)"]
    plot_predict(results, os.path.join(out, "bench_predict.png"))
    return lines


def plot_predict(results, path):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    for ax, batch in zip(axes, (1, 1024)):
        names, meds, colors = [], [], []
        for impl in ("keras3", "tf_keras", "native", "kerascpp", "onnxruntime"):
            for r in find(results, impl, kind="predict", batch=batch):
                for name, series in r["series"].items():
                    names.append(f"{LABEL[impl]} {name}")
                    meds.append(statistics.median(series["us"]))
                    colors.append(COLOR[impl])
        ax.barh(range(len(meds)), meds, color=colors)
        ax.set_yticks(range(len(meds)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set(xscale="log", title=f"seed MLP, batch {batch:,}: median latency", xlabel="us per call (log)")
        ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def headline(results, seed_root):
    """The README's table: one row per seed complaint, kerascpp against both Keras."""
    n_load = max(r["job"]["n"] for r in find(results, kind="load"))
    n_w = max(r["job"]["n"] for r in find(results, kind="weights"))
    rows = []

    def row(what, getter):
        cells = [getter(i) for i in ("keras3", "tf_keras", "native", "kerascpp", "onnxruntime")]
        ratio = "-" if not (cells[0] and cells[2]) else x(cells[0]["median"] / cells[2]["median"])
        rows.append(f"| {what} | " + " | ".join(t(c["median"]) if c else "-" for c in cells) + f" | {ratio} |")

    def load(i):
        f = os.path.join(seed_root, "tf_keras/model.h5" if i == "tf_keras" else "keras3/model.keras")
        return one(results, i, "load", kind="load", n=n_load, file=f)
    row(f"load one of {n_load:,} seed MLPs kept alive (`.keras`; tf-keras `.h5`)", load)
    for name in ("get_value", "get_weights"):
        row(f"`{name}` (median of up to {n_w:,} calls)", lambda i, nm=name: one(results, i, nm, kind="weights", n=n_w))
    bigs = {"keras3": "big_keras3.keras", "tf_keras": "big_tf_keras.h5", "native": "big_keras3.keras",
            "kerascpp": "big_keras3.keras"}
    big = next((r["job"]["file"] for r in find(results, kind="big") if r["job"]["file"].endswith(bigs["native"])), "")
    mb = os.path.getsize(big) / 1e6 if os.path.exists(big) else 0
    row(f"load the {mb:.0f} MB model (`.keras`; tf-keras `.h5`)",
        lambda i: next((stats(r["series"]["load"]) for r in find(results, i, kind="big")
                        if r["job"]["file"].endswith(bigs[i])), None))
    for batch in (1, 1024):
        row(f"`predict`, batch {batch:,}", lambda i, b=batch: one(
            results, i, "run" if i == "onnxruntime" else "predict", kind="predict", batch=b))
    return ["| | Keras 3 | tf-keras | kerascpp C++ | kerascpp Python | ONNX Runtime | Keras 3 / kerascpp C++ |",
            "|---|---|---|---|---|---|---|"] + rows


def write(meta, results, out, seed_root, root):
    import matplotlib
    matplotlib.use("Agg")
    errors = [r for r in results if "error" in r]
    m = meta["machine"]
    versions = {}
    for r in results:
        versions.update(r.get("versions", {}))
    lines = ["# Benchmarks: kerascpp side by side with Keras", "",
             f"Written by `make bench` (`bench/run_all.py`{' --quick: tiny counts, not a measurement' if meta['quick'] else ''}) "
             f"on {meta['date']} in {meta['wall_s'] / 60:.1f} minutes. Every number below comes from that one run.", "",
             f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}; load average at the "
             f"start {', '.join(f'{v:.1f}' for v in m['load_avg'])} (a shared machine: expect noise, read the spreads).",
             f"- Threads: {m['threads']} for every side (TensorFlow intra- and inter-op, OpenBLAS, ONNX Runtime).",
             "- Versions: Python " + m["python"] + ", " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ".",
             "- Each implementation runs in its own process: Keras 3 and tf-keras with `load_model(compile=False)`, "
             "kerascpp C++ as `build/bench_native`, kerascpp Python as `import kerascpp as keras`.", "",
             "## Headline (medians)", ""] + headline(results, seed_root) + [""]
    lines += section_loads(results, seed_root, out, meta["config"]) + [""]
    lines += section_weights(results, out, meta["config"]) + [""]
    lines += section_big(results, out) + [""]
    lines += section_predict(results, out) + [""]
    lines += ["## How to read these numbers", "",
              "- Times are wall-clock per item (`time.perf_counter` in Python, `steady_clock` in C++); the ratio "
              "columns divide medians. On a shared machine the maxima are mostly other processes: compare medians.",
              "- RSS growth is VmRSS after a series minus before it. The Python sides keep their per-call times "
              "in a preallocated array, so the measurement itself adds nothing; allocator and interpreter caches "
              "still move RSS by a few hundred kB either way.",
              "- Keras's load time is its own `load_model` (config parsing, layer building, TensorFlow variable "
              "creation); kerascpp's is reading the file and building a runnable model. A load that is shorter "
              "than *read* is possible: *read* copies the whole file into one buffer, kerascpp reads each weight "
              "straight into its own tensor.",
              "- TensorFlow is pinned to one intra-op and one inter-op thread like every other side. Keras's "
              "`predict` builds a data pipeline on every call and may do better with TensorFlow's default "
              "thread pools (not measured here); `model(x)` is Keras's lowest-latency path.",
              "- Rerun with `make bench`; `BENCH_ARGS=--quick` checks that everything runs in about a minute; "
              "`bench/run_all.py --report-only` redraws this page from the last run's raw times "
              "(`BUILD/bench_work/results.json`).", ""]
    if errors:
        lines += ["## Failures", "", "What did not run, with its error (the rest of the run went on):", ""]
        lines += [f"- {LABEL.get(e['impl'], e['impl'])}, {e['job']['kind']} `{os.path.basename(e['job'].get('file', ''))}`: "
                  f"`{e['error'].strip().splitlines()[-1][:300]}`" for e in errors] + [""]
    page = os.path.join(out, "benchmarks.md")
    keep = doc_sections.kept(page)  # the sections other scripts own (bench/portable.py)
    with open(page, "w") as f:
        f.write("\n".join(lines) + ("\n" + keep if keep else ""))
