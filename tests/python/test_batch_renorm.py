"""BatchNormalization(renorm=True) trains as tf_keras trains it (batch renormalization: the batch's
moments corrected by r and d from the renorm statistics, clipped by renorm_clipping, moving_variance
from moving_stddev): a tf_keras .h5 loaded into kerascpp and trained on the same data gives tf_keras's
per-epoch losses and the same seven variables. tf_keras runs in its own process."""
import json

import numpy as np
import pytest

import keras_reference
import kerascpp as keras

REFERENCE = r"""
import json, sys
import numpy as np
import tf_keras as K

rng = np.random.default_rng(8)
x = rng.normal(size=(48, 6)).astype("float32") * 2 + 1
y = (x[:, :1] - x[:, 1:2] * 0.5).astype("float32")
out = {}
for name, bn in (("clipped", dict(renorm=True, renorm_clipping={"rmin": 0.7, "rmax": 1.4, "dmax": 0.5},
                                  renorm_momentum=0.9, momentum=0.8)),
                 ("plain", dict(renorm=True, center=False, momentum=0.95))):
    inp = K.Input((6,))
    h = K.layers.Dense(8, name="d1")(inp)
    h = K.layers.BatchNormalization(name="bn", **bn)(h)
    model = K.Model(inp, K.layers.Dense(1, name="d2")(h))
    r = np.random.default_rng(3)
    model.set_weights([r.normal(scale=0.5, size=w.shape).astype("float32") if "renorm" not in v.name and "moving" not in v.name
                       else w for v, w in zip(model.weights, model.get_weights())])
    model.compile(K.optimizers.SGD(0.05 if name == "clipped" else 0.002), "mse")  # unclipped r, d: a gentle rate
    path = f"{sys.argv[1]}/{name}.h5"
    model.save(path)
    h = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    bn_layer = model.get_layer("bn")
    out[name] = {"loss": [float(v) for v in h.history["loss"]],
                 "bn": {v.name.split("/")[-1].split(":")[0]: np.asarray(v).tolist() for v in bn_layer.weights},
                 "x": x.tolist(), "y": y.tolist()}
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("renorm")
    return d, keras_reference.run(REFERENCE, d)


@pytest.mark.parametrize("name", ["clipped", "plain"])
def test_renorm_trains_as_tf_keras(reference, name):
    d, ref = reference
    ref = ref[name]
    model = keras.models.load_model(str(d / f"{name}.h5"))
    x, y = np.array(ref["x"], "float32"), np.array(ref["y"], "float32")
    h = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    # float32 sums in another order over 18 steps: 1e-4 relative.
    assert np.all(np.isfinite(ref["loss"]))
    np.testing.assert_allclose(h.history["loss"], ref["loss"], rtol=1e-4)
    bn = {w.path.split("/")[-1]: np.asarray(w) for w in model.get_layer("bn").weights}
    assert sorted(bn) == sorted(ref["bn"])
    for key, value in ref["bn"].items():
        np.testing.assert_allclose(bn[key], value, rtol=1e-4, atol=1e-5, err_msg=key)


def test_bad_renorm_clipping_is_refused_by_name():
    config = {"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 4], "name": "in"}},
        {"class_name": "BatchNormalization", "config": {"name": "bn", "renorm": True, "renorm_clipping": {"rmid": 1.0}}}]}}
    with pytest.raises(ValueError, match=r"'bn'.*invalid keys for `renorm_clipping` argument: rmid"):
        keras.models.model_from_json(json.dumps(config))
