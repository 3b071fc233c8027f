"""Files that kerascpp writes load in real Keras and predict Keras's own outputs (to 1e-5 of each
output's scale, the fixtures' float32 round-off bound; see keras_loads_converted.py).

Every fixture is converted by `kerascpp convert` (scripts/convert_fixtures.sh) into the Keras 3 forms
(.keras, .h5, JSON + .weights.h5), read by Keras 3, and the Keras 2 forms (.h5, JSON + weights-only
.h5), read by tf_keras. Each Keras runs in its own process, as they do not share one well.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("KERASCPP_BUILD", os.path.join(ROOT, "build"))
CHECK = os.path.join(ROOT, "tests", "python", "keras_loads_converted.py")


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("converted")
    subprocess.run([os.path.join(ROOT, "scripts", "convert_fixtures.sh"), BUILD, str(out)], check=True)
    return out


@pytest.mark.parametrize("flavour", ["keras3", "tf_keras"])
def test_real_keras_loads_what_kerascpp_saved(converted, flavour):
    args = [sys.executable, CHECK, str(converted)] + (["--tf-keras"] if flavour == "tf_keras" else [])
    r = subprocess.run(args, capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.startswith(("ok", "FAIL")) or "passed" in l]
    assert r.returncode == 0, "\n".join(l for l in lines if not l.startswith("ok")) + r.stderr[-2000:]
    assert any(l.startswith("ok") for l in lines)


def test_every_fixture_converts_to_the_dialects_that_can_express_it(converted):
    skipped = sorted(str(p.relative_to(converted)) for p in converted.rglob("*.skipped"))
    # What one dialect cannot express: the hard_sigmoid layers of deep_mlp_activations (Keras 2's and
    # 3's formulas differ); Keras 3's LayerNormalization(rms_scaling=True), keras.applications helper
    # layers and keras.ops nodes in Keras 2; tf_keras's TFOpLambda in Keras 3; Keras 3's augmentation
    # layers beyond tf_keras's seven and AutoContrast, one_hot encodings of several values per sample and IntegerLookup's
    # hashed OOV slots in Keras 2; tf_keras's BatchNormalization over several axes in Keras 3;
    # Keras 3's Resizing with data_format="channels_first" or pad_to_aspect_ratio in Keras 2; the
    # hard_sigmoid recurrent activation of seq_rnn_options (each writer's own formula) in the other;
    # Keras 3's GroupQueryAttention, RMSNormalization and MultiHeadAttention(use_gate, sliding_window)
    # (rank 3 and 4 inputs) in Keras 2; Keras masks on MultiHeadAttention inputs of rank 4, on which
    # tf_keras fails.
    expressible_in_one = ("deep_mlp_activations", "all_layers_normalization_keras3/k2",
                          "all_layers_spatial_channels_first_keras3/k2", "all_layers_spatial_reshaping_keras3/k2",
                          "applications_helpers_keras3/k2", "keras_ops_nodes_keras3/k2",
                          "keras_ops_graph_keras3/k2", "tf_op_lambda_tf_keras/k3",
                          "ops_math_keras3/k2", "ops_math_tf_keras/k3", "ops_arrangement_keras3/k2",
                          "ops_arrangement_tf_keras/k3",
                          "image_augmentation_keras3/k2", "auto_contrast_keras3/k2",
                          "numeric_preprocessing_keras3/k2", "lookup_and_hashing_keras3/k2",
                          "normalization_tf_keras_axes_tf_keras/k3", "seq_rnn_options_keras3/k2",
                          "seq_rnn_options_tf_keras/k3",
                          "seq_keras3_attention_keras3/k2", "seq_mha_rank4_masks_keras3/k2",
                          "seq_mha_rank4_causal_keras3/k2")
    # Op node fixtures (ops_*): Keras 3's ops convert to Keras 3 only, tf_keras's TFOpLambda to Keras 2 only.
    def own_dialect_only(s):
        return s.startswith("ops_") and s.split("/")[0].endswith(("_keras3", "_tf_keras")) and (
            "_keras3/k2" in s or "_tf_keras/k3" in s)
    assert all(s.startswith(expressible_in_one) or own_dialect_only(s) for s in skipped), skipped
