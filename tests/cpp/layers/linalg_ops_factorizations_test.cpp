// Factorization op nodes (linalg_ops_factorizations.cpp): qr / lu_factor and tf.linalg qr / lu, and
// svd(compute_uv=False) (linalg_ops_eigen.cpp). Values as TensorFlow 2 computes them (its Eigen kernels' signs and pivots,
// printed by Python), the inferred shapes, each differentiable output's backward against central
// finite differences, the throwing backward where TensorFlow has no gradient, and the errors for what
// kerascpp does not run. Forward values against Keras: the ops_factorizations_* fixtures.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {
using testing::error_of;
using namespace op_node_testing;  // NOLINT: the helpers of every op node test

const Json kX = Json::array({in(0)});
std::vector<Tensor> run_all(const LayerPtr& op, const std::vector<Tensor>& xs) { return op->call(xs, CallContext{}); }
void expect_values(const Tensor& t, const Shape& shape, const std::vector<float>& want, float tol) {
  ASSERT_EQ(t.shape(), shape);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "at " << i;
}
// t + s on the leading diagonal of every matrix of (..., m, n): a well conditioned matrix whose
// Householder pivots keep their signs under a small step.
Tensor plus_diag(const Tensor& t, float s) {
  Tensor r = t.copy();
  const int64_t m = t.dim(-2), n = t.dim(-1);
  for (int64_t q = 0; q < t.size() / (m * n); ++q)
    for (int64_t i = 0; i < std::min(m, n); ++i) r.data<float>()[q * m * n + i * n + i] += s;
  return r;
}
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  const std::string e = error_of(f);
  EXPECT_FALSE(e.empty());
  for (const std::string& p : parts) EXPECT_NE(e.find(p), std::string::npos) << e;
}
const Tensor kA = Tensor::from_vector({3, 2}, {1, 2, 3, 4, 5, 6});
const Tensor kS = Tensor::from_vector({3, 3}, {2, -1, 0.5f, 1, 3, -2, -4, 0.5f, 1});
const Tensor kW = Tensor::from_vector({2, 4}, {1, -2, 3, 0.5f, -1, 4, 2, -3});

TEST(FactorizationOps, QrHasTheSignsOfTensorFlow) {
  // tf.linalg.qr(A): R's diagonal -|.| by Householder, except a square matrix's last (no reflection).
  const LayerPtr reduced = keras_op("linalg.Qr", {{"mode", "reduced"}}, kX), complete = keras_op("linalg.Qr", {{"mode", "complete"}}, kX);
  std::vector<Tensor> o = run_all(reduced, {kA});
  expect_values(o[0], {3, 2}, {-0.16903079f, 0.89708501f, -0.50709248f, 0.2760267f, -0.84515423f, -0.34503305f}, 1e-6f);
  expect_values(o[1], {2, 2}, {-5.91608f, -7.4373569f, 0, 0.82807845f}, 1e-5f);
  o = run_all(complete, {kA});
  expect_values(o[0], {3, 3}, {-0.16903079f, 0.89708501f, 0.40824893f, -0.50709248f, 0.2760267f, -0.81649643f, -0.84515423f,
                               -0.34503305f, 0.40824804f}, 1e-6f);
  expect_values(o[1], {3, 2}, {-5.91608f, -7.4373569f, 0, 0.82807845f, 0, 0}, 1e-5f);
  o = run_all(tf_op("linalg.qr", kX, Json::object()), {kS});
  expect_values(o[0], {3, 3}, {-0.43643582f, 0.28325889f, 0.85398382f, -0.21821789f, -0.95413524f, 0.20495608f, 0.87287158f,
                               -0.096904367f, 0.47823089f}, 1e-6f);
  expect_values(o[1], {3, 3}, {-4.5825758f, 0.21821785f, 1.0910895f, 0, -3.1941166f, 1.9529955f, 0, 0, 0.49531049f}, 1e-5f);
  o = run_all(tf_op("linalg.qr", Json::array(), {{"input", in(0)}, {"full_matrices", true}}), {kW});
  expect_values(o[0], {2, 2}, {-0.70710683f, 0.70710677f, 0.70710677f, 0.70710683f}, 1e-6f);
  expect_values(o[1], {2, 4}, {-1.4142135f, 4.2426405f, -0.70710707f, -2.4748738f, 0, 1.4142137f, 3.5355339f, -1.767767f}, 1e-5f);
  // A batch: each matrix its own, the shapes inferred as computed.
  Tensor batch = Tensor::empty({2, 3, 3});
  std::copy(kS.data<float>(), kS.data<float>() + 9, batch.data<float>());
  std::copy(kS.data<float>(), kS.data<float>() + 9, batch.data<float>() + 9);
  o = run_all(reduced, {batch});
  EXPECT_EQ(reduced->compute_output_shape({{-1, 3, 3}}), (std::vector<Shape>{{-1, 3, 3}, {-1, 3, 3}}));
  EXPECT_EQ(complete->compute_output_shape({{-1, 5, 2}}), (std::vector<Shape>{{-1, 5, 5}, {-1, 5, 2}}));
  EXPECT_EQ(reduced->compute_output_shape({{-1, 2, 5}}), (std::vector<Shape>{{-1, 2, 2}, {-1, 2, 5}}));
  EXPECT_NEAR(o[1].data<float>()[9 + 8], 0.49531049f, 1e-5f);
}

TEST(FactorizationOps, LuPivotsAsTensorFlow) {
  // tf.linalg.lu: A[p] = L U, the largest |value| per column; Keras's lu_factor: p's inverse.
  const Tensor a = Tensor::from_vector({4, 4}, {0.5f, 1, 2, -1, 3, 0.2f, 1, 1, 1, -5, 0.3f, 2, 2, 1, 4, 0.1f});
  const std::vector<float> lu = {3, 0.2f, 1, 1, 0.33333334f, -5.0666666f, -0.033333331f, 1.6666666f, 0.66666669f, -0.17105263f,
                                 3.3276315f, -0.28157896f, 0.16666667f, -0.19078948f, 0.54903126f, -0.69408858f};
  std::vector<Tensor> o = run_all(tf_op("linalg.lu", kX, {{"output_idx_type", "int32"}}), {a});
  expect_values(o[0], {4, 4}, lu, 1e-5f);
  expect_values(o[1], {4}, {1, 2, 3, 0}, 0);
  const LayerPtr keras = keras_op("linalg.LuFactor", Json::object(), kX);
  o = run_all(keras, {a});
  expect_values(o[0], {4, 4}, lu, 1e-5f);
  expect_values(o[1], {4}, {3, 0, 1, 2}, 0);
  o = run_all(tf_op("linalg.lu", Json::array(), {{"input", in(0)}}), {kS});
  expect_values(o[0], {3, 3}, {-4, 0.5f, 1, -0.25f, 3.125f, -1.75f, -0.5f, -0.23999999f, 0.58000004f}, 1e-6f);
  expect_values(o[1], {3}, {2, 1, 0}, 0);
  EXPECT_EQ(keras->compute_output_shape({{4, 4}}), (std::vector<Shape>{{4, 4}, {4}}));
  EXPECT_EQ(tf_op("linalg.lu", kX, Json::object())->compute_output_shape({{-1, 3, 3}}), (std::vector<Shape>{{-1, 3, 3}, {-1, 3}}));
  // A batch: tf.linalg.lu per matrix.
  Tensor batch = Tensor::empty({2, 3, 3});
  std::copy(kS.data<float>(), kS.data<float>() + 9, batch.data<float>());
  std::copy(a.data<float>(), a.data<float>() + 9, batch.data<float>() + 9);
  o = run_all(tf_op("linalg.lu", kX, Json::object()), {batch});
  EXPECT_EQ(o[1].data<float>()[0], 2.f);
  EXPECT_NEAR(o[0].data<float>()[0], -4.f, 1e-6f);
}

TEST(FactorizationOps, SingularValues) {
  const LayerPtr keras = keras_op("linalg.SVD", {{"full_matrices", true}, {"compute_uv", false}}, kX);
  expect_values(run_all(keras, {kS})[0], {3}, {4.7437057f, 3.7186477f, 0.41099367f}, 1e-5f);
  const LayerPtr tf = tf_op("linalg.svd", kX, {{"compute_uv", false}});
  expect_values(run_all(tf, {kW})[0], {2}, {5.5852523f, 3.6131649f}, 1e-5f);
  EXPECT_EQ(keras->compute_output_shape({{-1, 3, 5}}), (std::vector<Shape>{{-1, 3}}));
}

TEST(FactorizationOps, Gradients) {
  std::mt19937 g(41);
  const Tensor tall = plus_diag(distinct(g, {2, 4, 3}), 2.f), square = plus_diag(distinct(g, {2, 3, 3}), 2.f);
  const Tensor wide = plus_diag(distinct(g, {2, 2, 4}), 2.f);
  for (const char* mode : {"reduced", "complete"}) {
    expect_gradients_of_each(keras_op("linalg.Qr", {{"mode", mode}}, kX), {square});
    expect_gradients_of_each(keras_op("linalg.Qr", {{"mode", mode}}, kX), {wide});
  }
  expect_gradients_of_each(keras_op("linalg.Qr", {{"mode", "reduced"}}, kX), {tall});
  expect_gradients_of_each(tf_op("linalg.qr", kX, Json::object()), {tall});
  expect_gradients(keras_op("linalg.SVD", {{"full_matrices", true}, {"compute_uv", false}}, kX), {tall});
  expect_gradients(tf_op("linalg.svd", kX, {{"compute_uv", false}}), {wide});
  expect_gradients(tf_op("linalg.svd", kX, {{"compute_uv", false}}), {square});
  // Both outputs in one target: the tape sums Q's part and R's part.
  const LayerPtr qr = keras_op("linalg.Qr", {{"mode", "reduced"}}, kX);
  const GradientCheck c = check_gradients(
      [&](const std::vector<Tensor>& x) {
        const std::vector<Tensor> o = run_all(qr, x);
        const Tensor q2 = ops::binary(ops::BinaryOp::multiply, o[0], o[0]);
        return ops::binary(ops::BinaryOp::add, ops::sum(ops::sum(q2, 2), 1), ops::sum(ops::sum(o[1], 2), 1));
      },
      {tall}, 1e-3);
  EXPECT_LE(c.max_error, 2e-2) << c.worst;
}

TEST(FactorizationOps, NoGradientWhereTensorFlowHasNone) {
  std::mt19937 g(42);
  auto gradient_of = [](const LayerPtr& op, const Tensor& x, size_t out) {
    GradientTape tape;
    tape.watch(x);
    const Tensor y = run_all(op, {x})[out];
    return tape.gradient(y, {x});
  };
  const Tensor tall = plus_diag(distinct(g, {4, 3}), 2.f), square = plus_diag(distinct(g, {3, 3}), 2.f);
  const LayerPtr complete = keras_op("linalg.Qr", {{"mode", "complete"}}, kX);
  for (size_t out : {0, 1}) expect_error([&] { gradient_of(complete, tall, out); }, {"linalg.Qr", "no gradient", "complete", "4 > 3"});
  expect_error([&] { gradient_of(tf_op("linalg.qr", kX, {{"full_matrices", true}}), tall, 1); }, {"linalg.qr", "no gradient"});
  expect_error([&] { gradient_of(keras_op("linalg.LuFactor", Json::object(), kX), square, 0); }, {"LuFactor", "no gradient", "Lu"});
  expect_error([&] { gradient_of(tf_op("linalg.lu", kX, Json::object()), plus_diag(distinct(g, {2, 3, 3}), 2.f), 0); },
               {"linalg.lu", "no gradient"});
  // Without a tape the forward runs.
  EXPECT_EQ(run_all(complete, {tall})[0].shape(), (Shape{4, 4}));
}

TEST(FactorizationOps, ErrorsNameTheOpAndTheArgument) {
  std::mt19937 g(43);
  expect_error([&] { run_all(keras_op("linalg.Qr", {{"mode", "r"}}, kX), {kS}); }, {"Qr", "'mode'", "'reduced' or 'complete'"});
  expect_error([&] { run_all(keras_op("linalg.Qr", {{"mode", "reduced"}}, kX), {distinct(g, {3})}); }, {"Qr", "'x'", "rank >= 2"});
  expect_error([&] { keras_op("linalg.LuFactor", Json::object(), kX)->compute_output_shape({{3, 4}}); },
               {"LuFactor", "'x'", "square"});
  expect_error([&] { run_all(tf_op("linalg.lu", kX, Json::object()), {kW}); }, {"linalg.lu", "'x'", "square"});
  // Keras's lu_factor of a batch: its TF backend's tf.math.invert_permutation fails on one.
  expect_error([&] { keras_op("linalg.LuFactor", Json::object(), kX)->compute_output_shape({{-1, 3, 3}}); },
               {"LuFactor", "'x'", "batch", "invert_permutation"});
  expect_error([&] { tf_op("linalg.lu", kX, {{"output_idx_type", "float32"}})->compute_output_shape({{-1, 3, 3}}); },
               {"linalg.lu", "'output_idx_type'"});
  // (svd with its vectors and eigh: linalg_ops_eigen_test.cpp)
}

}  // namespace
}  // namespace kerascpp
