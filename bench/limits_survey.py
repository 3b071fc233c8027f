"""What real Keras models reach of each LoadLimits default (docs/reliability.md): every keras.applications
model (weights=None) and a BERT-sized transformer encoder, built by Keras 3, measured on their configs:
config bytes and nesting depth, layers and layer calls (nested models counted), the largest rank and the
largest layer output (elements, None as 1), and the bytes of their weights.

    .venv/bin/python bench/limits_survey.py [--out build/limits_survey.md]
"""
import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

APPS = ["ConvNeXtXLarge", "DenseNet201", "EfficientNetB7", "EfficientNetV2L", "InceptionResNetV2", "InceptionV3",
        "MobileNetV3Large", "NASNetLarge", "ResNet152V2", "VGG19", "Xception"]


def depth(text):
    d = best = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            d += 1
            best = max(best, d)
        elif c in "]}":
            d -= 1
    return best


def walk(model):
    """(layers, calls, largest rank, largest elements) over the model and the models inside it."""
    layers = calls = rank = elements = 0
    for layer in model.layers:
        layers += 1
        calls += max(1, len(layer._inbound_nodes))
        if isinstance(layer, keras.Model):
            inner = walk(layer)
            layers, calls = layers + inner[0], calls + inner[1]
            rank, elements = max(rank, inner[2]), max(elements, inner[3])
        for node in layer._inbound_nodes:
            for t in keras.tree.flatten(node.output_tensors):
                shape = tuple(t.shape)
                rank = max(rank, len(shape))
                elements = max(elements, int(np.prod([d or 1 for d in shape])))
    return layers, calls, rank, elements


def bert_like():
    """A 12-block encoder of BERT-base's sizes (hidden 768, 12 heads, 3072 feed-forward, 512 tokens)."""
    ids = keras.Input((512,), dtype="int32")
    x = keras.layers.Embedding(30522, 768)(ids)
    for _ in range(12):
        a = keras.layers.MultiHeadAttention(12, 64)(x, x)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, a]))
        f = keras.layers.Dense(768)(keras.layers.Dense(3072, activation="gelu")(x))
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, f]))
    return keras.Model(ids, x, name="bert_base_like")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="build/limits_survey.md")
    args = ap.parse_args()
    rows = []
    for name, make in [(n, lambda n=n: getattr(keras.applications, n)(weights=None)) for n in APPS] + [
            ("BERT-base-sized encoder", bert_like)]:
        m = make()
        text = json.dumps({"class_name": m.__class__.__name__, "config": m.get_config()})
        layers, calls, rank, elements = walk(m)
        weight_bytes = sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in m.weights)
        rows.append((name, len(text), depth(text), layers, calls, rank, elements, weight_bytes))
        print(rows[-1], flush=True)
        keras.backend.clear_session()
    out = ["| model | config bytes | JSON depth | layers | layer calls | largest rank | largest output (elements) | weights (bytes) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    out += ["| %s | %d | %d | %d | %d | %d | %d | %d |" % r for r in rows]
    top = [max(r[i] for r in rows) for i in range(1, 8)]
    out.append("| **largest** | %d | %d | %d | %d | %d | %d | %d |" % tuple(top))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
