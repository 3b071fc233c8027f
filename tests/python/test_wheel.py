"""`pip wheel .` builds a wheel that installs into a fresh virtual environment and runs the seed
snippets there, with no instruction an x86-64-v2 CPU lacks outside the run-time-dispatched kernels
(scripts/test_wheel.sh does it; this test runs it and shows what failed)."""
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("KERASCPP_BUILD", os.path.join(ROOT, "build"))


def test_wheel_installs_in_a_fresh_venv_and_runs_the_seed_snippets():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([os.path.join(ROOT, "scripts", "test_wheel.sh"), BUILD], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count("ok: the wheel's kerascpp") == 2, r.stdout
    assert "ok " in r.stdout and "_kerascpp" in r.stdout, r.stdout
