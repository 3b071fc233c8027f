// Attention, AdditiveAttention, MultiHeadAttention, GroupQueryAttention, EinsumDense and
// RMSNormalization beyond what the Keras fixtures show (tests/fixtures/seq_attention, seq_transformer,
// seq_mha_options, seq_keras3_attention: predictions of both writers, masks, options): gradients
// against finite differences, the einsum op against loops, masked rows, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "kerascpp/error.h"
#include "../test_errors.h"
#include "layer_test_util.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

LayerPtr built(const std::string& cls, const Json& config, const std::vector<Shape>& inputs, int seed = 11) {
  LayerPtr l = make_layer(cls, config);
  l->build(inputs);
  std::mt19937 g(seed);
  std::vector<Tensor> w;
  for (const VariablePtr& v : l->weights()) w.push_back(random(g, v->shape()));
  l->set_weights(w);
  return l;
}

using testing::error_of;

TEST(Einsum, MatchesLoopsForBatchContractedFreeAndSummedLetters) {
  std::mt19937 g(1);
  const Tensor a = random(g, {2, 3, 4, 5}), b = random(g, {2, 5, 4, 6});
  // b: batch, i: free in a, j: contracted, k: contracted, l: free in b.
  const Tensor y = ops::einsum("bijk,bkjl->bli", a, b);
  ASSERT_EQ(y.shape(), (Shape{2, 6, 3}));
  for (int bb = 0; bb < 2; ++bb)
    for (int l = 0; l < 6; ++l)
      for (int i = 0; i < 3; ++i) {
        double s = 0;
        for (int j = 0; j < 4; ++j)
          for (int k = 0; k < 5; ++k)
            s += double(a.data<float>()[((bb * 3 + i) * 4 + j) * 5 + k]) * b.data<float>()[((bb * 5 + k) * 4 + j) * 6 + l];
        EXPECT_NEAR(y.data<float>()[(bb * 6 + l) * 3 + i], s, 1e-4);
      }
  // A letter of one operand only is summed over first.
  const Tensor x = random(g, {3, 4}), w = random(g, {4, 2});
  const Tensor z = ops::einsum("ab,bc->c", x, w);
  for (int c = 0; c < 2; ++c) {
    double s = 0;
    for (int a2 = 0; a2 < 3; ++a2)
      for (int b2 = 0; b2 < 4; ++b2) s += double(x.data<float>()[a2 * 4 + b2]) * w.data<float>()[b2 * 2 + c];
    EXPECT_NEAR(z.data<float>()[c], s, 1e-4);
  }
  EXPECT_NE(error_of([&] { ops::einsum("ab,bc", x, w); }).find("'ab,bc->ac'"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("abc,cd->ad", x, w); }).find("rank"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("ab,ac->bc", x, w); }).find("dimension 'a'"), std::string::npos);
}

TEST(EinsumDense, GradientsMatchFiniteDifferences) {
  std::mt19937 g(2);
  struct Case {
    Json config;
    Shape input;
  };
  const Case cases[] = {
      {{{"equation", "abc,cde->abde"}, {"output_shape", {nullptr, 2, 3}}, {"bias_axes", "de"}, {"activation", "tanh"}},
       {2, 4, 5}},
      {{{"equation", "...d,de->...e"}, {"output_shape", 3}}, {2, 3, 4}},
      {{{"equation", "abc,cd->abd"}, {"output_shape", {nullptr, 3}}, {"bias_axes", "b"}}, {2, 4, 5}},
      {{{"equation", "ab...,bc->ac..."}, {"output_shape", 3}, {"bias_axes", "c"}}, {2, 4, 5}},
  };
  for (const Case& c : cases) {
    Json config = c.config;
    config["name"] = "e";
    LayerPtr l = built("EinsumDense", config, {c.input});
    const Tensor x = random(g, c.input);
    std::string where;
    // float32 forward passes with a step of 1e-2: errors of a few 1e-3 at most; a wrong gradient is O(1).
    EXPECT_LE(worst_weight_gradient_error(*l, {x}, {}, &where), 2e-2) << config.dump() << ": " << where;
    const GradientCheck gc = check_gradients([&](const std::vector<Tensor>& in) { return l->call(in, {})[0]; }, {x}, 1e-2);
    EXPECT_LE(gc.max_error, 2e-2) << config.dump() << ": " << gc.worst;
  }
  // The bias of "abc,cd->abd" with bias_axes "b" is (steps, 1), as Keras lays it out.
  LayerPtr b = built("EinsumDense", {{"name", "e"}, {"equation", "abc,cd->abd"}, {"output_shape", {nullptr, 3}},
                                     {"bias_axes", "b"}}, {{-1, 4, 5}});
  EXPECT_EQ(b->weights()[1]->shape(), (Shape{4, 1}));
}

TEST(EinsumDense, ErrorsNameTheLayerAndTheValue) {
  EXPECT_NE(error_of([] { make_layer("EinsumDense", {{"name", "e"}, {"equation", "ab->b"}, {"output_shape", 3}}); })
                .find("Invalid einsum equation 'ab->b' of layer 'e'"),
            std::string::npos);
  LayerPtr l = make_layer("EinsumDense", {{"name", "e"}, {"equation", "ab,bc->ac"}, {"output_shape", 3},
                                          {"bias_axes", "x"}});
  EXPECT_NE(error_of([&] { l->build({{-1, 4}}); }).find("Bias dimension 'x'"), std::string::npos);
  LayerPtr r = make_layer("EinsumDense", {{"name", "e"}, {"equation", "abc,cd->abd"}, {"output_shape", {nullptr, 3}}});
  EXPECT_NE(error_of([&] { r->build({{-1, 4}}); }).find("rank 3"), std::string::npos);
}

TEST(Attention, GradientsMatchFiniteDifferencesWithMasksAndCausality) {
  std::mt19937 g(3);
  const Tensor q = random(g, {2, 4, 3}), v = random(g, {2, 5, 3}), k = random(g, {2, 5, 3});
  const Tensor qm = Tensor::from_vector({2, 4}, {1, 1, 1, 0, 1, 0, 1, 1});
  const Tensor vm = Tensor::from_vector({2, 5}, {1, 1, 0, 1, 1, 1, 1, 1, 1, 0});
  const std::vector<Tensor> masks{qm, vm, Tensor()};
  const Json causal = {{"use_causal_mask", true}};
  struct Case {
    const char* cls;
    Json config;
  };
  const Case cases[] = {{"Attention", {{"use_scale", true}}},
                        {"Attention", {{"use_scale", true}, {"score_mode", "concat"}}},
                        {"AdditiveAttention", {}}};
  for (const Case& c : cases) {
    Json config = c.config;
    config["name"] = "a";
    LayerPtr l = built(c.cls, config, {q.shape(), v.shape(), k.shape()});
    CallContext ctx;
    ctx.masks = &masks;
    ctx.options = &causal;
    std::string where;
    EXPECT_LE(worst_weight_gradient_error(*l, {q, v, k}, ctx, &where), 2e-2) << c.cls << config.dump() << ": " << where;
    const GradientCheck gc =
        check_gradients([&](const std::vector<Tensor>& in) { return l->call(in, ctx)[0]; }, {q, v, k}, 1e-2);
    EXPECT_LE(gc.max_error, 2e-2) << c.cls << config.dump() << ": " << gc.worst;
    // Masked queries give zeros; with causality the first query sees the first value only.
    const Tensor y = l->call({q, v, k}, ctx)[0];
    for (int d = 0; d < 3; ++d) EXPECT_EQ(y.data<float>()[(0 * 4 + 3) * 3 + d], 0.f);
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(y.data<float>()[d], v.data<float>()[d], 1e-6);
  }
}

Json mha_config(const char* cls, Json extra = Json::object()) {
  Json c = std::string(cls) == "GroupQueryAttention"
               ? Json{{"name", "m"}, {"num_query_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 2}}
               : Json{{"name", "m"}, {"num_heads", 2}, {"key_dim", 3}};
  for (const auto& [k, v] : extra.items()) c[k] = v;
  return c;
}

TEST(MultiHeadAttention, GradientsMatchFiniteDifferences) {
  std::mt19937 g(4);
  const Tensor q = random(g, {2, 4, 3}), v = random(g, {2, 5, 3});
  const Tensor vm = Tensor::from_vector({2, 5}, {1, 1, 0, 1, 1, 1, 1, 1, 1, 0});
  const std::vector<Tensor> masks{Tensor(), vm, vm};
  const Json causal = {{"use_causal_mask", true}, {"return_attention_scores", true}};
  struct Case {
    const char* cls;
    Json extra;
  };
  const Case cases[] = {{"MultiHeadAttention", {}},
                        {"MultiHeadAttention", {{"value_dim", 2}, {"output_shape", {2, 2}}, {"use_gate", true}}},
                        {"GroupQueryAttention", {{"sliding_window", 2}}}};
  for (const Case& c : cases) {
    LayerPtr l = built(c.cls, mha_config(c.cls, c.extra), {q.shape(), v.shape(), v.shape()});
    CallContext ctx;
    ctx.masks = &masks;
    ctx.options = &causal;
    std::string where;
    EXPECT_LE(worst_weight_gradient_error(*l, {q, v, v}, ctx, &where), 2e-2) << c.cls << c.extra.dump() << ": " << where;
    const GradientCheck gc =
        check_gradients([&](const std::vector<Tensor>& in) { return l->call(in, ctx)[0]; }, {q, v, v}, 1e-2);
    EXPECT_LE(gc.max_error, 2e-2) << c.cls << c.extra.dump() << ": " << gc.worst;
    const std::vector<Tensor> out = l->call({q, v, v}, ctx);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].shape(), (Shape{2, c.cls == std::string("GroupQueryAttention") ? 4 : 2, 4, 5}));
  }
}

TEST(MultiHeadAttention, AFullyMaskedQueryRowIsZeroInKeras3AndUniformInTfKeras) {
  std::mt19937 g(5);
  const Tensor q = random(g, {1, 3, 4});
  const Tensor qm = Tensor::from_vector({1, 3}, {1, 1, 0});
  const std::vector<Tensor> masks{qm, qm, qm};
  const Json scores = {{"return_attention_scores", true}};
  CallContext ctx;
  ctx.masks = &masks;
  ctx.options = &scores;
  for (bool keras2 : {false, true}) {
    Json c = mha_config("MultiHeadAttention");
    if (keras2) c["kerascpp_keras2"] = true;
    LayerPtr l = built("MultiHeadAttention", c, {q.shape(), q.shape(), q.shape()});
    EXPECT_FALSE(l->get_config().contains("kerascpp_keras2"));
    const Tensor w = l->call({q, q, q}, ctx)[1];  // (1, heads, 3, 3)
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 3; ++j)
        EXPECT_NEAR(w.data<float>()[(h * 3 + 2) * 3 + j], keras2 ? 1.f / 3 : 0.f, 1e-6) << "keras2 " << keras2;
  }
}

TEST(MultiHeadAttention, ErrorsNameTheLayerAndTheValue) {
  const Shape s = {2, 4, 3};
  LayerPtr l = built("MultiHeadAttention", mha_config("MultiHeadAttention"), {s, s, s, {2, 4, 4}});
  const Tensor x = Tensor::zeros({2, 4, 3}), bad = Tensor::zeros({2, 3, 4});
  EXPECT_NE(error_of([&] { l->call({x, x, x, bad}, {}); }).find("Layer 'm' (MultiHeadAttention): the attention_mask of shape (2, 3, 4) does not broadcast"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make_layer("GroupQueryAttention", mha_config("GroupQueryAttention", {{"num_key_value_heads", 3}})); })
                .find("divisible"),
            std::string::npos);
  LayerPtr m = make_layer("MultiHeadAttention", mha_config("MultiHeadAttention"));
  EXPECT_NE(error_of([&] { m->build({s, {2, 5, 3}, {2, 6, 3}}); }).find("All dimensions of `value` and `key`"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("MultiHeadAttention", mha_config("MultiHeadAttention", {{"flash_attention", true}, {"dropout", 0.1}})); })
                .find("Dropout is not supported when flash attention is enabled"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("Attention", {{"name", "a"}, {"score_mode", "bilinear"}}); })
                .find("score_mode=bilinear"),
            std::string::npos);
}

TEST(MultiHeadAttention, MasksOfRank4InputsAsKeras3AndRefusedWhereTfKerasFails) {
  // Keras 3's values are the fixture seq_mha_rank4_masks; here the refusals.
  const Shape s = {2, 3, 4, 5};
  const Tensor x = Tensor::zeros(s);
  const Tensor m = Tensor::from_vector({2, 3, 4}, std::vector<float>(24, 1.f));
  const std::vector<Tensor> masks{m, m, Tensor()};
  CallContext ctx;
  ctx.masks = &masks;
  LayerPtr k2 = built("MultiHeadAttention", mha_config("MultiHeadAttention", {{"attention_axes", 2}, {"kerascpp_keras2", true}}),
                      {s, s, s});
  EXPECT_NE(error_of([&] { k2->call({x, x, x}, ctx); }).find("tf_keras's MultiHeadAttention fails on Keras masks of "
                                                            "inputs of rank 4 or more"),
            std::string::npos);
  LayerPtr k3 = built("MultiHeadAttention", mha_config("MultiHeadAttention", {{"attention_axes", 2}}), {s, s, s});
  EXPECT_EQ(k3->call({x, x, x}, ctx)[0].shape(), s);
}

TEST(MultiHeadAttention, CausalMasksOfRank4InputsComeFromAxis1AsKeras) {
  // Keras's values are the fixture seq_mha_rank4_causal; here the shapes Keras refuses, with its
  // reasons: the (1, 3, 3) causal mask of axis 1 against scores over axis 2 (length 4), and two
  // attention axes, whose mask expansion is out of bounds.
  const Shape s = {2, 3, 4, 5};
  const Tensor x = Tensor::zeros(s);
  const Json causal = {{"use_causal_mask", true}};
  CallContext c;
  c.options = &causal;
  LayerPtr axis1 = built("MultiHeadAttention", mha_config("MultiHeadAttention", {{"attention_axes", 1}}), {s, s, s});
  EXPECT_EQ(axis1->call({x, x, x}, c)[0].shape(), s);
  LayerPtr axis2 = built("MultiHeadAttention", mha_config("MultiHeadAttention", {{"attention_axes", 2}}), {s, s, s});
  EXPECT_NE(error_of([&] { axis2->call({x, x, x}, c); }).find("the attention mask of shape (1, 3, 3) (expanded to (1, "
                                                             "1, 1, 3, 3)) does not broadcast to the attention scores "
                                                             "of shape (2, 3, 2, 4, 4)"),
            std::string::npos);
  LayerPtr both = built("MultiHeadAttention", mha_config("MultiHeadAttention"), {s, s, s});
  EXPECT_NE(error_of([&] { both->call({x, x, x}, c); }).find("expand_dims at axis -5 is out of bounds for rank 3"),
            std::string::npos);
}

TEST(MultiHeadAttention, FlashAttentionComputesTheSameAttentionAndRefusesScoresAsKeras) {
  // flash_attention picks a kernel for dot_product_attention's path (TensorFlow has none and refuses it;
  // JAX and torch files carry it): the same values, with Keras's constraints.
  const Shape s = {2, 4, 3};
  for (const char* cls : {"MultiHeadAttention", "GroupQueryAttention"}) {
    LayerPtr plain = built(cls, mha_config(cls), {s, s, s});
    LayerPtr flash = built(cls, mha_config(cls, {{"flash_attention", true}}), {s, s, s});
    std::mt19937 g(9);
    const Tensor x = random(g, s);
    const Tensor a = plain->call({x, x, x}, {})[0], b = flash->call({x, x, x}, {})[0];
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << cls << " " << i;
    const Json scores = {{"return_attention_scores", true}};
    CallContext ctx;
    ctx.options = &scores;
    EXPECT_NE(error_of([&] { flash->call({x, x, x}, ctx); }).find("Returning attention scores is not supported when "
                                                                "flash attention is enabled"),
              std::string::npos) << cls;
  }
}

TEST(RMSNormalization, NormalisesByTheRootMeanSquareAndDifferentiates) {
  std::mt19937 g(6);
  const Tensor x = random(g, {2, 3, 4});
  LayerPtr l = built("RMSNormalization", {{"name", "r"}, {"axis", -1}, {"epsilon", 1e-6}}, {x.shape()});
  const Tensor y = l->call({x}, {})[0];
  const float* scale = l->weights()[0]->value().data<float>();
  for (int r = 0; r < 6; ++r) {
    double ms = 0;
    for (int d = 0; d < 4; ++d) ms += double(x.data<float>()[r * 4 + d]) * x.data<float>()[r * 4 + d] / 4;
    for (int d = 0; d < 4; ++d)
      EXPECT_NEAR(y.data<float>()[r * 4 + d], x.data<float>()[r * 4 + d] / std::sqrt(ms + 1e-6) * scale[d], 1e-5);
  }
  std::string where;
  EXPECT_LE(worst_weight_gradient_error(*l, {x}, {}, &where), 2e-2) << where;
  const GradientCheck gc = check_gradients([&](const std::vector<Tensor>& in) { return l->call(in, {})[0]; }, {x}, 1e-2);
  EXPECT_LE(gc.max_error, 2e-2) << gc.worst;
}

}  // namespace
}  // namespace kerascpp
