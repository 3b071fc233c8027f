"""Smoke run of `make bench` (bench/run_all.py --quick): every scenario runs with tiny counts on every
implementation and the report is written. No time is asserted: timing is bench/'s job."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KERASCPP_BUILD", os.path.join(ROOT, "build"))


@pytest.mark.skipif(not os.path.exists(os.path.join(BUILD, "bench_native")), reason="bench_native not built")
def test_bench_quick_run_writes_the_report(tmp_path):
    work = tmp_path / "work"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_all.py"), "--quick", "--build", BUILD,
                           "--out", str(tmp_path), "--work", str(work)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(work / "results.json") as f:
        results = json.load(f)["results"]
    assert [r for r in results if "error" in r] == []
    impls = {r["impl"] for r in results}
    assert impls == {"keras3", "tf_keras", "native", "kerascpp", "onnxruntime", "cat"}
    # Every model loaded without clear_session still predicts Keras's outputs after the other loads.
    loads = [r for r in results if r["job"]["kind"] == "load" and not r["job"].get("clear")]
    assert loads and all(r["first_model_predicts"] for r in loads)
    doc = (tmp_path / "benchmarks.md").read_text()
    for heading in ("## Headline", "## 1. Many models", "## 2. Weight reads", "## 3. A big model", "## 4. predict"):
        assert heading in doc
    for png in ("bench_load.png", "bench_weights.png", "bench_predict.png"):
        assert (tmp_path / png).stat().st_size > 1000
