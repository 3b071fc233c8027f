// Every Keras activation against the values real Keras computed (tests/fixtures/activations, written by
// keras.activations.* of Keras 3 and of tf_keras).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "../test_paths.h"
#include "io/npy/npy.h"
#include "layers/activations/activation_fn.h"

namespace kerascpp {
namespace {

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.size(); ++i) {
    float a = got.data<float>()[i], b = want.data<float>()[i];
    EXPECT_NEAR(a, b, 2e-6 * (1 + std::fabs(b))) << what << " at " << i;
  }
}

class ActivationParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ActivationParity, MatchesKeras) {
  const std::string dir = testing::fixture("activations/" + GetParam());
  const bool keras2 = GetParam() == "tf_keras";
  Tensor x = io::read_npy(dir + "/x.npy"), x2d = io::read_npy(dir + "/x2d.npy");
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().stem().string();
    if (e.path().extension() != ".npy" || name == "x" || name == "x2d") continue;
    Tensor want = io::read_npy(e.path().string());
    Tensor got;
    if (name == "gelu_approximate") {
      got = ops::unary(ops::UnaryOp::gelu_approximate, x);
    } else if (name == "leaky_relu_0.3") {
      got = ops::unary(ops::UnaryOp::leaky_relu, x, 0.3f);
    } else if (name == "elu_0.5") {
      got = ops::unary(ops::UnaryOp::elu, x, 0.5f);
    } else if (name == "relu_max6_thr1_slope0.1") {
      got = ops::relu(x, 0.1f, 6.f, 1.f);
    } else {
      std::string spec = (keras2 && name == "hard_sigmoid") ? "hard_sigmoid_k2" : name;
      layers::ActivationFn fn(Json(spec), "test");
      got = fn(name == "softmax" || name == "log_softmax" ? x2d : x);
    }
    expect_close(got, want, GetParam() + "/" + name);
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

INSTANTIATE_TEST_SUITE_P(Writers, ActivationParity, ::testing::Values("keras3", "tf_keras"));

TEST(Activation, UnknownNameIsRejected) {
  EXPECT_THROW(layers::ActivationFn(Json("sparkle"), "d"), ValueError);
  EXPECT_THROW(layers::ActivationFn(Json(3), "d"), ValueError);
}

}  // namespace
}  // namespace kerascpp
