"""keras.ops in the Python package: on symbolic tensors each function adds the op node Keras adds (the
same graph, computed natively, saved so that Keras reloads it), Python's operators and x[...] too; on
arrays it computes at once. Checked against real Keras 3 building the same graph."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kerascpp

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_the_table_of_keras_ops_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_keras_ops.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, "python/kerascpp/_keras_ops.py is stale: run scripts/make_keras_ops.py"


def graph(K):
    """One graph through ops of every family, written once for Keras and kerascpp."""
    ops, L = K.ops, K.layers
    x = K.Input((5, 6), name="x")
    b = K.Input((6,), name="b")
    h = L.Dense(6, name="dense")(x)
    pos = ops.abs(h) + 0.5
    outs = [ops.mean(h, axis=1), h[:, -1] + b, ops.split(h, 2, axis=2)[1], ops.top_k(h, 2)[0],
            ops.top_k(h, 2)[1] * 1.0, -h * 2.0, 1.0 - h, 2.0 ** ops.tanh(h), h / pos, h // 0.3, h % 0.4,
            ops.einsum("bij,bkj->bik", h, x), h[..., ::2, None], h[:, 1:4:2], ops.cumsum(h, axis=1),
            ops.sort(h, axis=-1), ops.norm(h, axis=-1),
            ops.cast(h > 0.1, "float32"), ops.where(h > 0.0, h, b[:, None, :]), ops.concatenate([h, x], axis=-1),
            ops.stack(ops.unstack(h, axis=1)[:2], axis=1), ops.pad(h, ((0, 0), (1, 0), (0, 2))),
            ops.softmax(h @ ops.transpose(x, (0, 2, 1))), ops.log(pos), ops.gelu(h),
            round(h * 3.0)]
    return K.Model([x, b], outs, name="ops_in_code")


def test_a_graph_of_ops_runs_as_keras_builds_it(tmp_path):
    import keras
    theirs, ours = graph(keras), graph(kerascpp)
    assert len(ours.outputs) == len(theirs.outputs)
    ours.set_weights(theirs.get_weights())
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((3, 5, 6)).astype("float32"), rng.standard_normal((3, 6)).astype("float32")]
    want, got = theirs.predict(xs, verbose=0), ours.predict(xs, verbose=0)
    for i, (w, g) in enumerate(zip(want, got)):
        assert g.shape == w.shape, i
        # float32 round-off of different kernels, scaled to each output
        np.testing.assert_allclose(g, w, atol=1e-5 * max(1.0, float(np.max(np.abs(w)))), err_msg=f"output {i}")
    # The nodes are Keras's: Keras reloads what kerascpp saves, and computes the same.
    path = tmp_path / "ops.keras"
    ours.save(path)
    back = keras.models.load_model(path)
    for i, (w, g) in enumerate(zip(want, back.predict(xs, verbose=0))):
        np.testing.assert_allclose(g, w, atol=1e-5 * max(1.0, float(np.max(np.abs(w)))), err_msg=f"output {i}")
    # And the graph trains: the op nodes' gradients reach the Dense below them.
    model = kerascpp.Model(ours.inputs, kerascpp.ops.mean(ours.outputs[0], axis=-1, keepdims=True))
    model.compile(optimizer="sgd", loss="mse")
    before = model.get_weights()[0].copy()
    model.fit(xs, np.ones((3, 1), "float32"), epochs=1, verbose=0)
    assert not np.allclose(model.get_weights()[0], before)


def test_ops_on_arrays_compute_at_once():
    import keras
    x = np.random.default_rng(1).standard_normal((3, 4)).astype("float32")
    for name, args, kwargs in [("cumsum", (x,), {"axis": 1}), ("sort", (x,), {}), ("einsum", ("ij,kj->ik", x, x), {}),
                               ("linspace", (x[:, 0], x[:, 1], 4), {"axis": 1}), ("triu", (x,), {"k": 1}),
                               ("logsumexp", (x,), {"axis": 0}), ("erfinv", (np.tanh(x),), {}), ("mean", (x,), {"axis": 0})]:
        want = np.asarray(getattr(keras.ops, name)(*args, **kwargs))
        got = np.asarray(getattr(kerascpp.ops, name)(*args, **kwargs))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
    values, indices = kerascpp.ops.top_k(x, 2)
    np.testing.assert_array_equal(indices, np.asarray(keras.ops.top_k(x, 2)[1]))


def test_bad_calls_say_what():
    x = kerascpp.Input((4,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        kerascpp.ops.mean(x, axes=1)
    with pytest.raises(TypeError, match="missing required argument: 'newshape'"):
        kerascpp.ops.reshape(x)
    with pytest.raises(NotImplementedError, match="argument 'axis' as a constant"):
        kerascpp.ops.mean(x, axis=x)
    with pytest.raises(ValueError, match="axis"):
        kerascpp.ops.mean(x, axis=3)
