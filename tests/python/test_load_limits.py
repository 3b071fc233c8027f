"""load_model's limits (C++ LoadLimits) from Python: the files an attacker would upload are refused
before memory is taken, with errors naming the member or layer, the value and the limit. The
files are real Keras files with one thing changed (h5py and zipfile write them)."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import h5py
import pytest

import kerascpp as keras

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures")
MLP = os.path.join(FIX, "seed_mlp_2x10")


def write_bomb(path, inflated=1 << 30):
    """A .keras whose config.json inflates from about 1 MB to `inflated` bytes of valid JSON (the
    issue's attack: 3 MB to 3 GB), with the real weights beside it."""
    with zipfile.ZipFile(os.path.join(MLP, "keras3", "model.keras")) as src, \
            zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("config.json", "w", force_zip64=True) as f:
            f.write(b'{"a": "')
            chunk = b" " * (1 << 20)
            for _ in range(inflated >> 20):
                f.write(chunk)
            f.write(b'"}')
        for name in ("metadata.json", "model.weights.h5"):
            z.writestr(name, src.read(name))


# The refusal comes before the member is inflated: the child process stays far below the 1 GiB
# the config would take (and the ~10 GB its parse would), and returns at once.
def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    bomb = str(tmp_path / "bomb.keras")
    write_bomb(bomb)
    assert os.path.getsize(bomb) < 2 << 20
    script = (
        "import resource, sys, kerascpp as keras\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    keras.models.load_model(sys.argv[1])\n"
        "    print('LOADED')\n"
        "except ValueError as e:\n"
        "    print('ERROR', e)\n"
        "print('GROWTH_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", script, bomb], capture_output=True, text=True, timeout=120,
                         env=env, check=True).stdout
    assert "ERROR" in out and "config.json" in out and "compression ratio" in out, out
    assert "LoadLimits::max_compression_ratio" in out, out
    growth_kb = int(out.split("GROWTH_KB")[1])
    assert growth_kb < 64 << 10, out  # 64 MB: nothing of the gigabyte was taken


def test_without_the_ratio_the_config_size_refuses_it(tmp_path):
    bomb = str(tmp_path / "bomb.keras")
    write_bomb(bomb, inflated=128 << 20)
    with pytest.raises(ValueError, match=r"config.json of .*bomb.keras declares 134217737 bytes, over the limit "
                                         r"of 67108864 \(LoadLimits::max_config_bytes\)"):
        keras.models.load_model(bomb, max_compression_ratio=0)
    # Raised above the member, the JSON itself is what fails.
    with pytest.raises(ValueError, match="Invalid JSON|class_name"):
        keras.models.load_model(bomb, max_compression_ratio=0, max_config_bytes=1 << 28)


def edited_h5(tmp_path, edit):
    path = str(tmp_path / "edited.h5")
    shutil.copy(os.path.join(MLP, "tf_keras", "model.h5"), path)
    with h5py.File(path, "r+") as f:
        config = json.loads(f.attrs["model_config"])
        text = edit(config)
        f.attrs["model_config"] = text if isinstance(text, str) else json.dumps(config)
    return path


def first_dense(config):
    return next(l["config"] for l in config["config"]["layers"] if l["class_name"] == "Dense")


def test_huge_units_in_a_legacy_h5_name_the_layer(tmp_path):
    names = []

    def edit(config):
        names.append(first_dense(config)["name"])
        first_dense(config)["units"] = 2 ** 40

    path = edited_h5(tmp_path, edit)
    with pytest.raises(ValueError) as e:
        keras.models.load_model(path)
    msg = str(e.value)
    for part in ("edited.h5", f"Layer '{names[0]}' (Dense)", "kernel", "1099511627776", "LoadLimits::max_weight_bytes"):
        assert part in msg, msg


def test_deep_json_in_a_legacy_h5(tmp_path):
    path = edited_h5(tmp_path, lambda c: '{"class_name": "Sequential", "config": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(ValueError, match=r"model_config of .*edited.h5 nests \[ \] and \{ \} deeper than the limit "
                                         r"of 256 levels \(LoadLimits::max_json_depth\)"):
        keras.models.load_model(path)


def test_limits_as_keyword_arguments():
    path = os.path.join(MLP, "keras3", "model.keras")
    assert keras.models.LOAD_LIMITS["max_layers"] == 100000
    assert keras.models.LOAD_LIMITS["max_weight_bytes"] == 0
    assert keras.models.load_model(path, max_layers=4, max_weight_bytes=1 << 20).count_params() > 0
    with pytest.raises(ValueError, match=r"over the limit of 3 \(LoadLimits::max_layers\)"):
        keras.models.load_model(path, max_layers=3)
    with pytest.raises(ValueError, match=r"over the limit of 100 bytes \(LoadLimits::max_weight_bytes\)"):
        keras.models.load_model(path, max_weight_bytes=100)
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_layer'"):
        keras.models.load_model(path, max_layer=3)
    with pytest.raises(TypeError, match="expected an integer"):
        keras.models.load_model(path, max_layers=3.5)
    with pytest.raises(ValueError, match="cannot be negative"):
        keras.models.load_model(path, max_rank=-1)


def copy_h5(src, dst, **file_kwargs):
    """The same HDF5 content in a file h5py writes with other options."""
    with h5py.File(src, "r") as a, h5py.File(dst, "w", **file_kwargs) as b:
        for k, v in a.attrs.items():
            b.attrs[k] = v
        for k in a:
            a.copy(k, b)

def copy_h5_gzip_under(src, dst, top):
    """src's content in dst, the datasets under the root member `top` compressed with gzip (a filter
    outside the subset kerascpp's own reader takes)."""
    with h5py.File(src, "r") as a, h5py.File(dst, "w") as b:
        for k, v in a.attrs.items():
            b.attrs[k] = v
        for k in a:
            if k != top:
                a.copy(k, b)
        def put(name, obj):
            if isinstance(obj, h5py.Group):
                g = b.require_group(f"{top}/{name}")
            else:
                gzip = {"compression": "gzip"} if obj.shape else {}  # a scalar takes no filter
                g = b.create_dataset(f"{top}/{name}", data=obj[()], **gzip)
            for ak, av in obj.attrs.items():
                g.attrs[ak] = av
        b.require_group(top)
        for ak, av in a[top].attrs.items():
            b[top].attrs[ak] = av
        a[top].visititems(put)


# Without compile, the optimizer's part of a file is left unread, as Keras leaves it: an optimizer
# group outside the subset kerascpp's reader takes (gzip) then neither sends the file to libhdf5 nor,
# with allow_libhdf5=False, refuses it; with compile it still does.
def test_without_compile_the_optimizer_group_is_not_read(tmp_path):
    import numpy as np
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
    want = keras.models.load_model(os.path.join(MLP, "keras3", "model.h5")).predict(x, verbose=0)

    legacy = str(tmp_path / "gzip_optimizer.h5")
    copy_h5_gzip_under(os.path.join(MLP, "keras3", "model.h5"), legacy, "optimizer_weights")
    archive = str(tmp_path / "gzip_optimizer.keras")
    with zipfile.ZipFile(os.path.join(MLP, "keras3", "model.keras")) as src:
        with open(str(tmp_path / "orig.weights.h5"), "wb") as f:
            f.write(src.read("model.weights.h5"))
        copy_h5_gzip_under(str(tmp_path / "orig.weights.h5"), str(tmp_path / "model.weights.h5"), "optimizer")
        with zipfile.ZipFile(archive, "w") as z:
            for name in ("config.json", "metadata.json"):
                z.writestr(name, src.read(name))
            z.write(str(tmp_path / "model.weights.h5"), "model.weights.h5")
    for path in (legacy, archive):
        m = keras.models.load_model(path, compile=False, allow_libhdf5=False)
        np.testing.assert_array_equal(m.predict(x, verbose=0), want)
        with pytest.raises(OSError, match=r"as an HDF5 file: it has .*outside the HDF5 subset"):
            keras.models.load_model(path, allow_libhdf5=False)
        m = keras.models.load_model(path)  # libhdf5 reads it, optimizer state included
        np.testing.assert_array_equal(m.predict(x, verbose=0), want)
        assert len(m.optimizer.variables) > 2



# A Keras file copied with libver="latest" has a version-3 superblock (and version-2 object headers),
# outside the subset kerascpp's own reader takes: libhdf5 reads it by default; allow_libhdf5=False, for
# files from untrusted sources, refuses it and names the construct. A .keras archive's weights
# member too. Files inside the subset load the same either way.
def test_allow_libhdf5_false_keeps_libhdf5_out(tmp_path):
    import numpy as np
    assert keras.models.LOAD_LIMITS["allow_libhdf5"] is True
    legacy = os.path.join(MLP, "keras3", "model.h5")
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
    want = keras.models.load_model(legacy).predict(x, verbose=0)
    np.testing.assert_array_equal(keras.models.load_model(legacy, allow_libhdf5=False).predict(x, verbose=0), want)

    latest = str(tmp_path / "latest.h5")
    copy_h5(legacy, latest, libver="latest")
    np.testing.assert_array_equal(keras.models.load_model(latest).predict(x, verbose=0), want)
    with pytest.raises(OSError, match=r"latest.h5\" as an HDF5 file: it has .*outside the HDF5 subset .*"
                                      r"\(LoadLimits::allow_libhdf5 is false\)"):
        keras.models.load_model(latest, allow_libhdf5=False)

    archive = str(tmp_path / "latest.keras")
    weights = str(tmp_path / "model.weights.h5")
    with zipfile.ZipFile(os.path.join(MLP, "keras3", "model.keras")) as src:
        with open(str(tmp_path / "orig.weights.h5"), "wb") as f:
            f.write(src.read("model.weights.h5"))
        copy_h5(str(tmp_path / "orig.weights.h5"), weights, libver="latest")
        with zipfile.ZipFile(archive, "w") as z:
            for name in ("config.json", "metadata.json"):
                z.writestr(name, src.read(name))
            z.write(weights, "model.weights.h5")
    np.testing.assert_array_equal(keras.models.load_model(archive).predict(x, verbose=0), want)
    with pytest.raises(OSError, match=r"latest.keras/model.weights.h5\" as an HDF5 file: it has "):
        keras.models.load_model(archive, allow_libhdf5=False)
    with pytest.raises(TypeError, match=r"allow_libhdf5=...\): expected True or False"):
        keras.models.load_model(legacy, allow_libhdf5=0)


# A file that goes to libhdf5 (gzip weights) has every part kerascpp's reader understands checked
# first, the optimizer's group too, although a load with compile=False reads nothing there: damage
# in it is an IOError naming it, not something libhdf5 is handed.
def test_a_file_for_libhdf5_has_its_unread_optimizer_group_checked(tmp_path):
    import numpy as np
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
    src = os.path.join(MLP, "keras3", "model.h5")
    want = keras.models.load_model(src).predict(x, verbose=0)
    path = str(tmp_path / "gzip_weights.h5")
    copy_h5_gzip_under(src, path, "model_weights")
    np.testing.assert_array_equal(keras.models.load_model(path, compile=False).predict(x, verbose=0), want)
    with h5py.File(path, "r") as f:
        addr = h5py.h5o.get_info(f["optimizer_weights"].id).addr
    with open(path, "r+b") as f:
        f.seek(addr)
        f.write(b"\x07")  # the object header's version
    with pytest.raises(OSError, match=r"gzip_weights.h5\" as an HDF5 file: damaged at \"optimizer_weights\": "
                                      r"not an object header \(version 7\)"):
        keras.models.load_model(path, compile=False)
