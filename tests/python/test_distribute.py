"""keras.distribute.MultiWorkerMirroredStrategy with worker processes on this machine (Gloo over TCP on
127.0.0.1): started by the launcher or by TF_CONFIG; the weights after fit equal one process's on the
same global batches; the chief alone writes checkpoints; a killed worker stops the others with a clear
error in bounded time. tests/cpp/training/distribute_test.cpp covers the engine with worker threads."""
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kerascpp as keras

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "training", "mlp_adam")

# A worker: trains the fixture under the strategy, saves its weights and logs under out/rank<r>/, and
# checkpoints each epoch into out/rank<r>/ (only the chief's folder may get one).
WORKER = textwrap.dedent("""
    import json, os, signal, sys
    import numpy as np
    import kerascpp as keras
    out, batch, die = sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""
    strategy = keras.distribute.MultiWorkerMirroredStrategy()
    rank = strategy.cluster_resolver.rank
    mine = os.path.join(out, f"rank{rank}")
    os.makedirs(mine, exist_ok=True)
    with strategy.scope():
        model = keras.models.load_model(os.path.join(%r, "model.keras"))
    x = np.load(os.path.join(%r, "x.npy")); y = np.load(os.path.join(%r, "y.npy"))
    callbacks = [keras.callbacks.ModelCheckpoint(os.path.join(mine, "epoch{epoch}.keras")),
                 keras.callbacks.CSVLogger(os.path.join(mine, "log.csv")),
                 keras.callbacks.TensorBoard(os.path.join(mine, "tb"))]
    if die and rank == 1:  # killed in the middle of training
        callbacks.append(keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: b == 1 and
                                                        os.kill(os.getpid(), signal.SIGKILL)))
    h = model.fit(x, y, batch_size=batch, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
    np.savez(os.path.join(mine, "weights.npz"), *model.get_weights())
    with open(os.path.join(mine, "info.json"), "w") as f:
        json.dump({"history": h.history, "replicas": strategy.num_replicas_in_sync,
                   "task": [strategy.cluster_resolver.task_type, strategy.cluster_resolver.task_id]}, f)
""" % (FIXTURE, FIXTURE, FIXTURE))


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python")] + env.get("PYTHONPATH", "").split(os.pathsep))
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def _one_process(batch):
    model = keras.models.load_model(os.path.join(FIXTURE, "model.keras"))
    x, y = np.load(os.path.join(FIXTURE, "x.npy")), np.load(os.path.join(FIXTURE, "y.npy"))
    h = model.fit(x, y, batch_size=batch, epochs=2, shuffle=False, verbose=0)
    return model.get_weights(), h.history


def _weights(folder):
    with np.load(os.path.join(folder, "weights.npz")) as z:
        return [z[f"arr_{i}"] for i in range(len(z.files))]


def _launch(tmp_path, nproc, batch):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "kerascpp.distribute.launch", "--nproc", str(nproc), "--timeout", "60",
                        str(script), str(out), str(batch)], env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.mark.parametrize("nproc,batch", [(2, 16), (3, 16)])
def test_workers_make_the_updates_of_one_process(tmp_path, nproc, batch):
    out = _launch(tmp_path, nproc, batch)
    expected, history = _one_process(batch)
    first = _weights(out / "rank0")
    for r in range(nproc):
        got = _weights(out / f"rank{r}")
        info = json.loads((out / f"rank{r}" / "info.json").read_text())
        assert info["replicas"] == nproc and info["task"] == ["worker", r]
        for g, f, e in zip(got, first, expected):
            np.testing.assert_array_equal(g, f)  # every worker applies the same summed gradient
            # Against one process: the gradient summed in another order (float32 round-off through 2
            # epochs of Adam), relative to each weight's magnitude.
            np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)
        for k, v in history.items():  # the logs are the global batches' (accumulators summed)
            np.testing.assert_allclose(info["history"][k], v, rtol=1e-5)
    # The chief alone writes the checkpoints and the CSV log.
    assert sorted(os.listdir(out / "rank0")) == ["epoch1.keras", "epoch2.keras", "info.json", "log.csv", "tb",
                                                 "weights.npz"]
    for r in range(1, nproc):
        assert sorted(os.listdir(out / f"rank{r}")) == ["info.json", "weights.npz"]
    reloaded = keras.models.load_model(str(out / "rank0" / "epoch2.keras"))
    for a, b in zip(reloaded.get_weights(), first):
        np.testing.assert_array_equal(a, b)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tf_config_as_keras_users_write_it(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    ports = [_free_port(), _free_port()]
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "out"), "16"],
                              env=_env(TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": t, "index": 0}})),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for t in ("chief", "worker")]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stdout.read()
    tasks = [json.loads((tmp_path / "out" / f"rank{r}" / "info.json").read_text())["task"] for r in range(2)]
    assert tasks == [["chief", 0], ["worker", 0]]
    np.testing.assert_array_equal(_weights(tmp_path / "out" / "rank0")[0], _weights(tmp_path / "out" / "rank1")[0])


def test_a_killed_worker_stops_the_others_with_a_clear_error(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    master = f"127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "out"), "8", "die"],
                              env=_env(KERASCPP_RANK=str(r), KERASCPP_WORLD_SIZE="2", KERASCPP_MASTER=master,
                                       KERASCPP_DISTRIBUTED_TIMEOUT="60"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(2)]
    assert procs[1].wait(timeout=300) == -signal.SIGKILL
    out = procs[0].communicate(timeout=120)[0]  # well before the 60 s timeout: the peer's socket closed
    assert procs[0].returncode != 0
    assert "Data-parallel all-reduce on worker 0 of 2 failed" in out, out
    assert not os.path.exists(tmp_path / "out" / "rank0" / "weights.npz")
    for name in os.listdir(tmp_path / "out" / "rank0"):  # only whole checkpoints (saves are atomic)
        assert name in ("epoch1.keras", "log.csv", "tb"), name


def test_the_launcher_on_two_nodes(tmp_path):
    # Two launchers of one worker each, as on two machines (here both on 127.0.0.1): ranks 0 and 1.
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    master = f"127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([sys.executable, "-m", "kerascpp.distribute.launch", "--nproc", "1", "--nnodes", "2",
                               "--node-rank", str(node), "--master", master, str(script), str(tmp_path / "out"), "16"],
                              env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for node in (0, 1)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stdout.read()
    for r in range(2):
        assert json.loads((tmp_path / "out" / f"rank{r}" / "info.json").read_text())["replicas"] == 2
    for a, b in zip(_weights(tmp_path / "out" / "rank0"), _weights(tmp_path / "out" / "rank1")):
        np.testing.assert_array_equal(a, b)
    bad = subprocess.run([sys.executable, "-m", "kerascpp.distribute.launch", "--nproc", "1", "--nnodes", "2",
                          str(script)], env=_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--master HOST:PORT is needed with several machines" in bad.stderr


def test_the_launcher_stops_every_worker_when_one_fails(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import os, sys, time\n"
                      "if os.environ['KERASCPP_RANK'] == '1': sys.exit(3)\n"
                      "time.sleep(120)\n")
    r = subprocess.run([sys.executable, "-m", "kerascpp.distribute.launch", "--nproc", "2", str(script)],
                       env=_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 3
    assert "exited with code 3; stopping the others" in r.stderr


def test_bad_clusters_are_clear_errors(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}')
    with pytest.raises(ValueError, match="task worker 3 is not in the cluster"):
        keras.distribute.MultiWorkerMirroredStrategy()
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"], "ps": ["b:2"]}, "task": {"type": "worker", "index": 0}}')
    with pytest.raises(ValueError, match="parameter servers"):
        keras.distribute.MultiWorkerMirroredStrategy()
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not JSON"):
        keras.distribute.MultiWorkerMirroredStrategy()
    monkeypatch.delenv("TF_CONFIG")
    monkeypatch.setenv("KERASCPP_WORLD_SIZE", "2")
    monkeypatch.setenv("KERASCPP_RANK", "1")
    monkeypatch.setenv("KERASCPP_MASTER", f"127.0.0.1:{_free_port()}")
    monkeypatch.setenv("KERASCPP_DISTRIBUTED_TIMEOUT", "0.3")
    with pytest.raises(OSError, match="Cannot reach the master 127.0.0.1:"):
        keras.distribute.MultiWorkerMirroredStrategy()


def test_one_worker_strategy_trains_as_without_it():
    strategy = keras.distribute.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 1 and strategy.is_chief
    with strategy.scope():
        assert keras.distribute.get_strategy() is strategy
        model = keras.models.load_model(os.path.join(FIXTURE, "model.keras"))
    assert keras.distribute.get_strategy() is None
    x, y = np.load(os.path.join(FIXTURE, "x.npy")), np.load(os.path.join(FIXTURE, "y.npy"))
    model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    expected, _ = _one_process(16)
    for a, b in zip(model.get_weights(), expected):
        np.testing.assert_array_equal(a, b)


def _strategies_on_threads(n, body):
    """Runs body(strategy) on n threads of this process, each a worker (a context holds no process-wide
    state); each thread's exception, or None."""
    import threading
    port, errors = _free_port(), [None] * n

    def work(r):
        try:
            spec = keras._kerascpp.ClusterSpec()
            spec.rank, spec.world_size, spec.master, spec.timeout = r, n, f"127.0.0.1:{port}", 30
            body(keras.distribute.MultiWorkerMirroredStrategy(keras.distribute.ClusterResolver(spec)))
        except Exception as e:  # noqa: BLE001 (reported to the test)
            errors[r] = e

    threads = [threading.Thread(target=work, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_a_metric_written_in_python_sums_its_variables_across_workers():
    class Seen(keras.metrics.Metric):  # the samples seen, and the mean of y_true: sums of variables
        def __init__(self, name="seen", aggregation="sum", **kw):
            super().__init__(name=name, **kw)
            self.n = self.add_variable(shape=(), initializer="zeros", name="n", aggregation=aggregation)
            self.total = self.add_variable(shape=(), initializer="zeros", name="total", aggregation=aggregation)

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.n.assign(self.n + float(np.shape(y_true)[0]))
            self.total.assign(self.total + float(np.sum(y_true)))

        def result(self):
            return self.total / self.n

    x, y = np.load(os.path.join(FIXTURE, "x.npy")), np.load(os.path.join(FIXTURE, "y.npy"))
    histories = [None, None]

    def body(strategy):
        with strategy.scope():
            model = keras.models.load_model(os.path.join(FIXTURE, "model.keras"), compile=False)
            model.compile(optimizer="adam", loss="mse", metrics=[Seen()])
        histories[strategy.cluster_resolver.rank] = model.fit(x, y, batch_size=16, epochs=1, verbose=0).history

    assert _strategies_on_threads(2, body) == [None, None]
    for h in histories:  # the whole epoch's rows, not one worker's half
        np.testing.assert_allclose(h["seen"], [np.mean(y)], rtol=1e-6)

    def mean_aggregated(strategy):
        with strategy.scope():
            model = keras.models.load_model(os.path.join(FIXTURE, "model.keras"), compile=False)
            model.compile(optimizer="adam", loss="mse", metrics=[Seen(aggregation="mean")])
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)

    for e in _strategies_on_threads(2, mean_aggregated):
        assert isinstance(e, NotImplementedError) and "aggregation='mean'" in str(e), e


def test_workers_on_threads_evaluate_the_global_batch():
    x, y = np.load(os.path.join(FIXTURE, "x.npy")), np.load(os.path.join(FIXTURE, "y.npy"))
    expected = keras.models.load_model(os.path.join(FIXTURE, "model.keras")).evaluate(x, y, batch_size=10, verbose=0,
                                                                                      return_dict=True)
    results = [None, None]

    def body(strategy):
        with strategy.scope():
            model = keras.models.load_model(os.path.join(FIXTURE, "model.keras"))
        results[strategy.cluster_resolver.rank] = model.evaluate(x, y, batch_size=10, verbose=0, return_dict=True)

    assert _strategies_on_threads(2, body) == [None, None]
    for r in results:
        assert r.keys() == expected.keys()
        for k in r:
            np.testing.assert_allclose(r[k], expected[k], rtol=1e-6)
