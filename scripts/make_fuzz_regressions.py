"""Writes the hand-made hostile inputs of fuzz/regressions/ (the fuzzers' crash inputs, crash-*, live beside them):
real Keras files from tests/fixtures with one thing changed as an attacker would, for every harness.
Each must end in a clean kerascpp error (fuzz/replay_main.cpp runs them, under ASan in make test-asan).

    .venv/bin/python scripts/make_fuzz_regressions.py
"""
import io
import json
import os
import shutil
import struct
import zipfile

import h5py

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "fuzz", "regressions")
MLP = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10")
KERAS = os.path.join(MLP, "keras3", "model.keras")


def out(harness, name):
    os.makedirs(os.path.join(OUT, harness), exist_ok=True)
    return os.path.join(OUT, harness, name)


def members():
    with zipfile.ZipFile(KERAS) as z:
        return {n: z.read(n) for n in z.namelist()}


def keras_with(path, config_bytes, compress=False):
    m = members()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED, compresslevel=9) as z:
        z.writestr("metadata.json", m["metadata.json"])
        if isinstance(config_bytes, int):  # a bomb: that many bytes of valid JSON
            with z.open("config.json", "w", force_zip64=True) as f:
                f.write(b'{"a": "')
                for _ in range(config_bytes >> 20):
                    f.write(b" " * (1 << 20))
                f.write(b'"}')
        else:
            z.writestr("config.json", config_bytes)
        z.writestr("model.weights.h5", m["model.weights.h5"])


def config():
    return json.loads(members()["config.json"])


def edited(edit):
    c = config()
    edit(c)
    return json.dumps(c).encode()


def dense(c):
    return next(l["config"] for l in c["config"]["layers"] if l["class_name"] == "Dense")


def h5_with(path, text):
    shutil.copy(os.path.join(MLP, "tf_keras", "model.h5"), path)
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = text


def main():  # writes its own files only: the fuzzers' crash inputs beside them stay
    units = edited(lambda c: dense(c).update(units=2 ** 40))
    deep = b'{"class_name": "Sequential", "config": ' + b"[" * 10000 + b"]" * 10000 + b"}"
    wrong_type = edited(lambda c: dense(c).update(units="ten", activation=7))
    rank = edited(lambda c: c["config"]["layers"][0]["config"].update(batch_shape=[None] + [1] * 40))
    wide = edited(lambda c: c["config"]["layers"][0]["config"].update(batch_shape=[None, 2 ** 40, 2 ** 40]))
    names = edited(lambda c: c["config"]["layers"][1].update(config=[1, 2]))

    # load_model: the whole loader.
    keras_with(out("load_model", "units_2_40.keras"), units)
    keras_with(out("load_model", "units_1e6.keras"), edited(lambda c: dense(c).update(units=10 ** 6)))
    keras_with(out("load_model", "config_bomb_128mb.keras"), 128 << 20, compress=True)
    keras_with(out("load_model", "deep_json.keras"), deep)
    keras_with(out("load_model", "wrong_types.keras"), wrong_type)
    keras_with(out("load_model", "rank_41.keras"), rank)
    keras_with(out("load_model", "elements_overflow.keras"), wide)
    keras_with(out("load_model", "layer_config_not_object.keras"), names)
    h5_with(out("load_model", "units_2_40.h5"), units.decode())
    h5_with(out("load_model", "deep_json.h5"), deep.decode())
    for name in os.listdir(os.path.join(ROOT, "tests", "fixtures", "damaged")):
        if name.endswith((".h5", ".keras")):
            shutil.copy(os.path.join(ROOT, "tests", "fixtures", "damaged", name), out("load_model", "damaged_" + name))

    # config: the JSON alone.
    for name, text in (("units_2_40.json", units), ("deep.json", deep), ("wrong_types.json", wrong_type),
                       ("rank_41.json", rank), ("elements_overflow.json", wide), ("layer_config_not_object.json", names),
                       ("not_an_object.json", b"[1, 2, 3]"), ("nan_tokens.json", b'{"class_name": NaN, "config": -Infinity}')):
        with open(out("config", name), "wb") as f:
            f.write(text)

    # zip: the archive reader (every member read under the limits).
    shutil.copy(out("load_model", "config_bomb_128mb.keras"), out("zip", "config_bomb_128mb.keras"))
    arc = io.BytesIO()
    with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", b"{}" * 1000)
    data = bytearray(arc.getvalue())
    cd = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, cd + 24, 3 << 30)  # the central directory claims 3 GB inflated
    with open(out("zip", "declared_3gb.keras"), "wb") as f:
        f.write(data)
    with open(out("zip", "truncated.keras"), "wb") as f:
        f.write(open(KERAS, "rb").read()[:-30])

    # hdf5: the subset reader.
    shutil.copy(os.path.join(MLP, "tf_keras", "model.h5"), out("hdf5", "mlp_tf_keras.h5"))
    raw = bytearray(open(os.path.join(MLP, "tf_keras", "model.h5"), "rb").read())
    for at in (0x28, 0x30, 0x40, 0x60):  # superblock addresses pointing past the end
        bad = bytearray(raw)
        struct.pack_into("<Q", bad, at, 1 << 62)
        with open(out("hdf5", f"superblock_addr_{at:#x}.h5"), "wb") as f:
            f.write(bad)

    # npy: the array reader.
    def npy(name, header, payload=b""):
        h = header.encode()
        h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
        with open(out("npy", name), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload)

    npy("shape_2_40.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }")
    npy("shape_overflow.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }")
    npy("shape_product_overflow.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")
    npy("truncated.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", b"\0" * 12)
    npy("no_shape.npy", "{'descr': '<f4', 'fortran_order': False, }")
    with open(out("npy", "header_past_end.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{")


if __name__ == "__main__":
    main()
