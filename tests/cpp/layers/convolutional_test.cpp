// The convolution and pooling layers beyond the Keras fixtures: bad configs and inputs give errors
// that name the layer, and a layer's cached oneDNN plans follow its weights and stay bounded.
// (Parity with Keras: tests/fixtures/all_layers_conv2d, all_layers_conv1d_3d, conv_channels_first.)
#include <gtest/gtest.h>

#include <thread>

#include "kerascpp/error.h"
#include "kerascpp/layer.h"
#include "kernels/ref/ref.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

Json conv_config(Json extra) {
  Json c = {{"name", "c"}, {"filters", 4}, {"kernel_size", 3}};
  c.update(extra);
  return c;
}

template <typename F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    FAIL() << "no error; expected one containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ConvLayers, BadConfigsNameTheLayerAndKey) {
  expect_error([] { make_layer("Conv2D", conv_config({{"filters", 0}})); }, "filters=0");
  expect_error([] { make_layer("Conv2D", conv_config({{"padding", "causal"}})); }, "only Conv1D accepts \"causal\"");
  expect_error([] { make_layer("Conv2D", conv_config({{"padding", "full"}})); }, "padding=full");
  expect_error([] { make_layer("Conv2D", conv_config({{"groups", 3}})); }, "groups=3");
  expect_error([] { make_layer("Conv2D", conv_config({{"kernel_size", {3, 3, 3}}})); }, "kernel_size");
  expect_error([] { make_layer("Conv2D", conv_config({{"strides", 0}})); }, "strides");
  expect_error([] { make_layer("Conv2D", conv_config({{"data_format", "channels_middle"}})); }, "data_format");
  expect_error([] { make_layer("Conv2D", conv_config({{"lora_rank", 4}})); }, "lora_rank");
  expect_error([] { make_layer("Conv2D", Json{{"name", "c"}, {"filters", 4}}); }, "kernel_size");
  expect_error([] { make_layer("Conv2DTranspose", conv_config({{"strides", 2}, {"output_padding", 2}})); },
               "output padding");
  expect_error([] { make_layer("DepthwiseConv2D", Json{{"name", "d"}, {"kernel_size", 3}, {"depth_multiplier", 0}}); },
               "depth_multiplier=0");
  expect_error([] { make_layer("MaxPooling2D", Json{{"name", "p"}, {"pool_size", 0}}); }, "pool_size");
}

TEST(ConvLayers, BadInputShapesNameTheLayer) {
  auto conv = make_layer("Conv2D", conv_config(Json::object()));
  expect_error([&] { conv->build({{-1, 8, 3}}); }, "expected ndim=4");
  expect_error([&] { conv->build({{-1, 2, 2, 3}}); }, "negative");
  conv->build({{-1, 8, 8, 3}});
  expect_error([&] { conv->compute_output_shape({{-1, 8, 8, 5}}); }, "expected 3 channels");
  auto grouped = make_layer("Conv2D", conv_config({{"groups", 2}}));
  expect_error([&] { grouped->build({{-1, 8, 8, 3}}); }, "groups=2");
  auto pool = make_layer("MaxPooling2D", Json{{"name", "p"}, {"pool_size", 3}});
  expect_error([&] { pool->compute_output_shape({{-1, 2, 8, 1}}); }, "negative or zero");
}

// Same result as the reference kernel, computed straight from the layer's weights.
Tensor reference_conv2d(const Tensor& x, const Tensor& kernel, const Tensor& bias) {
  kernels::ConvGeometry g;
  g.n = x.dim(0), g.in[1] = x.dim(1), g.in[2] = x.dim(2), g.ic = x.dim(3), g.oc = kernel.dim(3);
  g.k[1] = kernel.dim(0), g.k[2] = kernel.dim(1), g.out[1] = g.in[1] - 2, g.out[2] = g.in[2] - 2;
  Tensor y = Tensor::empty({g.n, g.out[1], g.out[2], g.oc});
  kernels::ref::conv(g, x.data<float>(), kernel.data<float>(), bias.data<float>(), y.data<float>());
  return y;
}

Tensor ramp(const Shape& s, float scale) {
  Tensor t = Tensor::empty(s);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = scale * static_cast<float>((i * 7) % 13 - 6);
  return t;
}

void expect_near(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-4) << i;
}

TEST(ConvLayers, PlansFollowSetWeights) {
  auto conv = make_layer("Conv2D", conv_config(Json::object()));
  conv->build({{-1, 6, 6, 3}});
  const Tensor x = ramp({2, 6, 6, 3}, 0.1f);
  conv->set_weights({ramp({3, 3, 3, 4}, 0.05f), ramp({4}, 0.5f)});
  const Tensor y1 = conv->call({x}, CallContext{})[0];
  expect_near(y1, reference_conv2d(x, conv->weights()[0]->value(), conv->weights()[1]->value()));
  // New weights after a call: the cached plan (weights re-laid-out for oneDNN) must not be reused.
  conv->set_weights({ramp({3, 3, 3, 4}, -0.02f), ramp({4}, 0.25f)});
  const Tensor y2 = conv->call({x}, CallContext{})[0];
  expect_near(y2, reference_conv2d(x, conv->weights()[0]->value(), conv->weights()[1]->value()));
}

TEST(ConvLayers, ManyThreadsManyBatchSizesOneLayer) {
  auto conv = make_layer("Conv2D", conv_config(Json::object()));
  conv->build({{-1, 6, 6, 3}});
  conv->set_weights({ramp({3, 3, 3, 4}, 0.05f), ramp({4}, 0.5f)});
  std::vector<Tensor> want;
  for (int64_t b = 1; b <= 12; ++b) {
    Tensor x = ramp({b, 6, 6, 3}, 0.1f);
    want.push_back(reference_conv2d(x, conv->weights()[0]->value(), conv->weights()[1]->value()));
  }
  // 12 batch sizes (more than the cache keeps) from 4 threads at once.
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep)
        for (int64_t b = 1; b <= 12; ++b) {
          const Tensor y = conv->call({ramp({b, 6, 6, 3}, 0.1f)}, CallContext{})[0];
          for (int64_t i = 0; i < y.size(); ++i)
            if (std::fabs(y.data<float>()[i] - want[b - 1].data<float>()[i]) > 1e-4) ++failures[t];
        }
    });
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace kerascpp
