// eigh and svd op nodes (linalg_ops_eigen.cpp): shapes, orthogonality, the outputs' order in each
// dialect, TensorFlow's gradients against central differences, and the errors. Their values against
// TensorFlow's (signs included) are the fixture ops_eigen_decompositions's.
#include <gtest/gtest.h>

#include "../test_errors.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using namespace op_node_testing;  // NOLINT: the helpers of every op node test
using testing::error_of;

const Json x0 = Json::array({in(0)});

TEST(EigenOps, EighGradientsAndShapes) {
  std::mt19937 g(21);
  const Tensor a = distinct(g, {2, 4, 4});
  const LayerPtr op = keras_op("linalg.Eigh", Json::object(), x0);
  EXPECT_EQ(op->compute_output_shape({{-1, 4, 4}}), (std::vector<Shape>{{-1, 4}, {-1, 4, 4}}));
  const std::vector<Tensor> wv = op->call({a}, CallContext{});
  const float* w = wv[0].data<float>();
  for (int i = 0; i + 1 < 4; ++i) EXPECT_LE(w[i], w[i + 1]);  // ascending
  expect_gradients_of_each(op, {a}, 5e-2);
  expect_gradients(tf_op("linalg.eigvalsh", x0, Json::object()), {a});
  EXPECT_NE(error_of([&] { op->compute_output_shape({{3, 4}}); }).find("not a batch of square matrices"), std::string::npos);
}

TEST(EigenOps, SvdGradientsShapesAndDialects) {
  std::mt19937 g(22);
  const Tensor wide = distinct(g, {2, 3, 4}), tall = distinct(g, {2, 4, 3}), sq = distinct(g, {2, 3, 3});
  // Keras 3: (u, s, vh), full by default; tf.linalg.svd: (s, u, v), reduced by default.
  EXPECT_EQ(keras_op("linalg.SVD", Json::object(), x0)->compute_output_shape({{-1, 3, 4}}),
            (std::vector<Shape>{{-1, 3, 3}, {-1, 3}, {-1, 4, 4}}));
  EXPECT_EQ(tf_op("linalg.svd", x0, Json::object())->compute_output_shape({{-1, 4, 3}}),
            (std::vector<Shape>{{-1, 3}, {-1, 4, 3}, {-1, 3, 3}}));
  EXPECT_EQ(keras_op("linalg.SVD", {{"compute_uv", false}}, x0)->compute_output_shape({{-1, 4, 3}}), (std::vector<Shape>{{-1, 3}}));
  for (const Tensor& x : {wide, tall, sq}) {
    expect_gradients_of_each(keras_op("linalg.SVD", {{"full_matrices", false}}, x0), {x}, 5e-2);
    expect_gradients_of_each(tf_op("linalg.svd", x0, Json::object()), {x}, 5e-2);
    expect_gradients(keras_op("linalg.SVD", {{"compute_uv", false}}, x0), {x});
  }
  expect_gradients_of_each(keras_op("linalg.SVD", Json::object(), x0), {sq}, 5e-2);  // full, square
  // u s vh rebuilds x.
  const std::vector<Tensor> usv = keras_op("linalg.SVD", {{"full_matrices", false}}, x0)->call({wide}, CallContext{});
  for (int64_t q = 0; q < 2; ++q)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        double v = 0;
        for (int64_t t = 0; t < 3; ++t)
          v += usv[0].data<float>()[q * 9 + i * 3 + t] * usv[1].data<float>()[q * 3 + t] * usv[2].data<float>()[q * 12 + t * 4 + j];
        EXPECT_NEAR(v, wide.data<float>()[q * 12 + i * 4 + j], 1e-5);
      }
  // TensorFlow's gradient stops at full matrices with |m - n| > 1.
  const Tensor very_wide = distinct(g, {1, 2, 5});
  const LayerPtr full = keras_op("linalg.SVD", Json::object(), x0);
  GradientTape tape;
  Tensor w = very_wide.copy();
  tape.watch(w);
  const Tensor u = full->call({w}, CallContext{})[0];
  EXPECT_NE(error_of([&] { tape.gradient(u, {w}); }).find("full_matrices=True with |m - n| > 1"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp
