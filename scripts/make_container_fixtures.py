"""Regenerates tests/fixtures/containers/: small HDF5 and zip files written by h5py, Python's zipfile
and real Keras, which the C++ container tests (tests/cpp/containers/) read.

    .venv/bin/python scripts/make_container_fixtures.py

Deterministic except for the Keras files (weights from a fixed seed, but Keras stamps the date).
"""

import io
import os
import zipfile

import h5py
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "containers")


def h5py_types(path):
    """Every string encoding and dtype the reader must handle, as h5py writes them."""
    with h5py.File(path, "w") as f:  # h5py defaults: libver earliest, superblock v0
        a = f.attrs
        a["str_utf8"] = "h\u00e9llo"  # Python str: scalar vlen UTF-8
        a["str_ascii"] = b"plain bytes"  # bytes: scalar vlen ASCII
        a["str_fixed"] = np.bytes_(b"fixed")  # numpy bytes: scalar fixed-length
        a["str_one_element"] = np.array([b"only"], dtype="S")  # a 1-element array
        a["list_vlen"] = [b"dense", b"dense_1", "d\u00e9".encode("utf8")]  # h5py >= 3: vlen ASCII
        a["list_fixed"] = np.array([b"a", b"bc", b""], dtype="S")  # fixed NULLPAD, as h5py < 3
        a["list_empty"] = np.asarray([])  # Keras's empty weight_names: float64 (0,)
        a["split0"] = np.array([b"l0", b"l1"], dtype="S3")  # Keras's 64 KB split pieces
        a["split1"] = np.array([b"l2"], dtype="S3")
        a["int_attr"] = np.int64(3)

        f.create_dataset("f32", data=np.arange(6, dtype="<f4").reshape(2, 3) / 4)
        f.create_dataset("f64", data=np.array([1.5, -2.0], dtype="<f8"))
        f.create_dataset("f16", data=np.array([0.5, -1.25, 65504], dtype="<f2"))
        f.create_dataset("i8", data=np.array([-128, 0, 127], dtype="i1"))
        f.create_dataset("u8", data=np.array([0, 200, 255], dtype="u1"))
        f.create_dataset("i32", data=np.array([-7, 1 << 30], dtype="<i4"))
        f.create_dataset("i64", data=np.array([-(1 << 40), 42], dtype="<i8"))
        f.create_dataset("bool", data=np.array([True, False, True]))
        f.create_dataset("scalar", data=np.float32(2.5))
        f.create_dataset("empty", data=np.zeros((0, 3), dtype="f4"))
        f.create_dataset("f32_be", data=np.array([1.0, -3.5], dtype=">f4"))
        f.create_dataset("i32_be", data=np.array([1, -2, 70000], dtype=">i4"))
        f.create_dataset("f16_be", data=np.array([0.5, -2.0], dtype=">f2"))
        f.create_dataset("u16", data=np.array([1, 2], dtype="<u2"))  # no kerascpp dtype
        f.create_dataset("gzip", data=np.arange(100, dtype="f4"), compression="gzip", chunks=(10,))
        bf16 = np.array([0x3FC0, 0xC010, 0x4040], dtype="<u2")  # 1.5, -2.25, 3.0
        d = f.create_dataset("bf16", data=bf16.view(np.dtype("V2")))  # what Keras writes
        d.attrs["dtype"] = "bfloat16"
        f.create_dataset("opaque", data=bf16.view(np.dtype("V2")))  # no marker: refused
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = [b"dense"]
        g.create_dataset("dense/dense/kernel:0", data=np.ones((2, 2), dtype="f4"))
        f.create_group("a/b/c")
        f["dangling"] = h5py.SoftLink("/nowhere")


def h5py_subset(path):
    """What kerascpp's own HDF5 reader serves without libhdf5 (no filters, soft links or big-endian
    data), including the less common structures: compact and unwritten datasets, a group large
    enough for a two-level B-tree, object header continuations and a group reached twice."""
    with h5py.File(path, "w") as f:
        a = f.attrs
        a["str_utf8"] = "h\u00e9llo"
        a["str_ascii"] = b"plain bytes"
        a["str_fixed"] = np.bytes_(b"fixed")
        a["str_one_element"] = np.array([b"only"], dtype="S")
        a["list_vlen"] = [b"dense", b"dense_1", "d\u00e9".encode("utf8"), b""]
        a["list_fixed"] = np.array([b"a", b"bc", b""], dtype="S")
        a["list_empty"] = np.asarray([])
        a["split0"] = np.array([b"l0", b"l1"], dtype="S3")
        a["split1"] = np.array([b"l2"], dtype="S3")
        a["int_attr"] = np.int64(3)
        a["float_attr"] = np.array([1.5, 2.5], dtype="<f4")
        a["null_attr"] = h5py.Empty("f4")
        f.create_dataset("f32", data=np.arange(6, dtype="<f4").reshape(2, 3) / 4)
        f.create_dataset("f64", data=np.array([1.5, -2.0], dtype="<f8"))
        f.create_dataset("f16", data=np.array([0.5, -1.25, 65504], dtype="<f2"))
        f.create_dataset("i8", data=np.array([-128, 0, 127], dtype="i1"))
        f.create_dataset("u8", data=np.array([0, 200, 255], dtype="u1"))
        f.create_dataset("i32", data=np.array([-7, 1 << 30], dtype="<i4"))
        f.create_dataset("i64", data=np.array([-(1 << 40), 42], dtype="<i8"))
        f.create_dataset("bool", data=np.array([True, False, True]))
        f.create_dataset("scalar", data=np.float32(2.5))
        f.create_dataset("empty", data=np.zeros((0, 3), dtype="f4"))
        f.create_dataset("u16", data=np.array([1, 2], dtype="<u2"))
        f.create_dataset("unwritten", shape=(2, 2), dtype="f4")  # no storage allocated: zeros
        bf16 = np.array([0x3FC0, 0xC010, 0x4040], dtype="<u2")
        d = f.create_dataset("bf16", data=bf16.view(np.dtype("V2")))
        d.attrs["dtype"] = "bfloat16"
        f.create_dataset("opaque", data=bf16.view(np.dtype("V2")))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        space = h5py.h5s.create_simple((4,))
        dset = h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F32LE, space, dcpl)
        dset.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([1, 2, 3, 4], dtype="<f4"))
        many = f.create_group("many")
        for i in range(300):  # a two-level B-tree
            many.create_dataset("w%03d" % i, data=np.full((2,), i, dtype="<f4"))
        big = f.create_group("many_attrs")
        for i in range(40):  # outgrows the first header block: continuation messages
            big.attrs["attr%02d" % i] = np.bytes_(b"x" * (40 + i))
        f.create_group("a/b/c")
        f["a/again"] = f["a/b"]  # a hard link: one group under two names


def python_zip(path):
    """One stored and one deflated member and an archive comment, as Python's zipfile writes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("stored.txt", (2024, 1, 2, 3, 4, 6)), b"stored bytes\n" * 3)
        info = zipfile.ZipInfo("dir/deflated.bin", (2024, 1, 2, 3, 4, 6))
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, bytes(range(256)) * 40)
        z.comment = b"a comment after the central directory"
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def keras_mlp(h5_path, keras_path):
    """A real Keras 3 model (2 -> 10 -> 10 -> 1) saved as legacy .h5 and as .keras."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    keras.utils.set_random_seed(1)
    m = keras.Sequential(
        [
            keras.Input((2,)),
            keras.layers.Dense(10, activation="relu"),
            keras.layers.Dense(10, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    m.save(h5_path)
    m.save(keras_path)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    h5py_types(os.path.join(OUT, "h5py_types.h5"))
    h5py_subset(os.path.join(OUT, "h5py_subset.h5"))
    python_zip(os.path.join(OUT, "python.zip"))
    keras_mlp(os.path.join(OUT, "keras3_mlp.h5"), os.path.join(OUT, "keras3_mlp.keras"))
