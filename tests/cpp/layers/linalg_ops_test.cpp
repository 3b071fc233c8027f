// Linear algebra op nodes (linalg_ops*.cpp): each op's backward against central finite differences, the
// inferred shapes, the values of the ops that mix samples (so no Keras fixture holds them; values as
// numpy / Keras 3.15 compute them), and the errors for what kerascpp does not run. Forward values
// against Keras: the ops_linalg_* fixtures.
#include <gtest/gtest.h>

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

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); }
Tensor run(const LayerPtr& op, const std::vector<Tensor>& xs, size_t i = 0) { return op->call(xs, CallContext{})[i]; }
// t + s I on every matrix of (..., n, n): well conditioned.
Tensor plus_eye(const Tensor& t, float s) {
  Tensor r = t.copy();
  const int64_t n = t.dim(-1);
  for (int64_t q = 0; q < t.size() / (n * n); ++q)
    for (int64_t i = 0; i < n; ++i) r.data<float>()[q * n * n + i * n + i] += s;
  return r;
}
// m m^T + n I, built with ops on the tape (symmetric positive definite).
Tensor spd(const Tensor& m) {
  const Tensor mt = ops::transpose(m, {0, 2, 1});
  return ops::binary(ops::BinaryOp::add, ops::batch_matmul(m, mt), plus_eye(Tensor::zeros(m.shape()), static_cast<float>(m.dim(-1))));
}
void expect_gradients_through(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& xs) {
  const GradientCheck c = check_gradients(f, xs, 1e-3);
  EXPECT_LE(c.max_error, 2e-2) << c.worst;
}

TEST(LinalgOps, ProductGradients) {
  std::mt19937 g(11);
  const Tensor x = distinct(g, {2, 3, 4}), y = distinct(g, {2, 4, 3}), m = distinct(g, {2, 4, 4}), v = distinct(g, {4});
  const Tensor w = distinct(g, {4, 2}), s3 = distinct(g, {2, 3, 3});
  const Json x0 = Json::array({in(0)}), xy = Json::array({in(0), in(1)});
  expect_gradients(keras_op("numpy.Einsum", {{"subscripts", "bij,bjk->bik"}}, xy), {x, y});
  expect_gradients(keras_op("numpy.Einsum", {{"subscripts", "bii->bi"}}, x0), {m});
  expect_gradients(keras_op("numpy.Einsum", {{"subscripts", "bij,bjk,bkl->bil"}}, {in(0), in(1), in(2)}), {x, m, m.copy()});
  expect_gradients(keras_op("numpy.Einsum", {{"subscripts", "...ij,...j->...i"}}, xy), {x, distinct(g, {1, 4})});
  expect_gradients(keras_op("numpy.Einsum", {{"subscripts", "bji"}}, x0), {x});
  expect_gradients(keras_op("numpy.Einsum", {{"subscripts", "bij,bij->"}}, xy), {x, x.copy()});
  expect_gradients(tf_op("einsum", {"ij,jk", in(0), in(1)}, Json::object()), {w, distinct(g, {2, 3})});
  expect_gradients(keras_op("numpy.Tensordot", {{"axes", 1}}, xy), {x, w});
  expect_gradients(keras_op("numpy.Tensordot", {{"axes", {{1, 2}, {2, 1}}}}, xy), {x, y});
  expect_gradients(keras_op("numpy.Dot", Json::object(), xy), {x, w});
  expect_gradients(keras_op("numpy.Dot", Json::object(), xy), {x, v});
  expect_gradients(keras_op("numpy.Inner", Json::object(), xy), {x, distinct(g, {5, 4})});
  expect_gradients(keras_op("numpy.Outer", Json::object(), xy), {w, v});
  expect_gradients(keras_op("numpy.Vdot", Json::object(), xy), {w, distinct(g, {2, 4})});
  expect_gradients(keras_op("numpy.Kron", Json::object(), xy), {x, w});
  expect_gradients(keras_op("numpy.Cross", Json::object(), xy), {s3, distinct(g, {2, 3, 3})});
  expect_gradients(keras_op("numpy.Cross", Json::object(), xy), {distinct(g, {2, 3, 2}), distinct(g, {3, 2})});
  expect_gradients(keras_op("numpy.Cross", {{"axisa", 1}, {"axisb", 2}, {"axisc", 1}}, xy), {s3, distinct(g, {1, 3, 3})});
  expect_gradients(keras_op("numpy.Trace", {{"offset", 1}, {"axis1", 1}, {"axis2", 2}}, x0), {x});
  expect_gradients(keras_op("numpy.Diagonal", {{"offset", -1}, {"axis1", 2}, {"axis2", 0}}, x0), {x});
  expect_gradients(keras_op("numpy.Diag", {{"k", 1}}, x0), {v});
  expect_gradients(keras_op("numpy.Diag", {{"k", -1}}, x0), {w});
  expect_gradients(keras_op("numpy.Diagflat", Json::object(), x0), {w});
  expect_gradients(keras_op("numpy.Vander", {{"N", 4}}, x0), {v});
  expect_gradients(keras_op("math.CDist", Json::object(), xy), {x, distinct(g, {2, 5, 4})});
  expect_gradients(tf_op("linalg.diag", {in(0)}, {{"k", -1}}), {x});
  expect_gradients(tf_op("linalg.diag_part", {in(0)}, {{"k", 1}}), {x});
  expect_gradients(tf_op("linalg.trace", {in(0)}, Json::object()), {m});
  expect_gradients(tf_op("linalg.band_part", {in(0), 1, 0}, Json::object()), {x});
  expect_gradients(tf_op("linalg.adjoint", {in(0)}, Json::object()), {x});
}

TEST(LinalgOps, MatrixFunctionGradients) {
  std::mt19937 g(12);
  const Tensor a = plus_eye(distinct(g, {2, 3, 3}), 3.f), b = distinct(g, {2, 3, 2}), bv = distinct(g, {2, 3});
  const Tensor h = distinct(g, {2, 3, 4});
  const Json x0 = Json::array({in(0)}), ab = Json::array({in(0), in(1)});
  expect_gradients(keras_op("linalg.Det", Json::object(), x0), {a});
  expect_gradients(keras_op("linalg.Inv", Json::object(), x0), {a});
  expect_gradients(keras_op("linalg.Solve", Json::object(), ab), {a, b});
  expect_gradients(keras_op("linalg.Solve", Json::object(), ab), {a, bv});
  expect_gradients(keras_op("linalg.SolveTriangular", {{"lower", true}}, ab), {a, b});
  expect_gradients(keras_op("linalg.SolveTriangular", Json::object(), ab), {a, bv});
  expect_gradients(tf_op("linalg.triangular_solve", {in(0), in(1)}, {{"adjoint", true}}), {a, b});
  expect_gradients(tf_op("linalg.solve", {in(0), in(1)}, Json::object()), {a, b});
  const LayerPtr slogdet = keras_op("numpy.Slogdet", Json::object(), x0);
  expect_gradients_through([&](const std::vector<Tensor>& x) { return run(slogdet, x, 1); }, {affine(a, -1.f, 0.f)});
  EXPECT_EQ(values(run(slogdet, {affine(a, -1.f, 0.f)}, 0)), (std::vector<float>{-1.f, -1.f}));  // det(-A) of 3x3
  // Cholesky and logdet read A's lower triangle and give TensorFlow's symmetric gradient: checked
  // through a symmetric A = m m^T + n I.
  const LayerPtr chol = keras_op("linalg.Cholesky", Json::object(), x0), upper = keras_op("linalg.Cholesky", {{"upper", true}}, x0);
  const LayerPtr logdet = keras_op("math.Logdet", Json::object(), x0), cinv = keras_op("linalg.CholeskyInverse", Json::object(), x0);
  const Tensor m = distinct(g, {2, 3, 3});
  for (const LayerPtr& op : {chol, upper, logdet})
    expect_gradients_through([&](const std::vector<Tensor>& x) { return run(op, {spd(x[0])}); }, {m});
  expect_gradients_through([&](const std::vector<Tensor>& x) { return run(cinv, {run(chol, {spd(x[0])})}); }, {m});
  expect_gradients(keras_op("linalg.CholeskyInverse", {{"upper", true}}, x0), {ops::transpose(run(chol, {spd(m)}), {0, 2, 1})});
  // cholesky_inverse(cholesky(A)) is A^-1.
  const Tensor ai = run(keras_op("linalg.Inv", Json::object(), x0), {spd(m)}), ci = run(cinv, {run(chol, {spd(m)})});
  for (int64_t i = 0; i < ai.size(); ++i) EXPECT_NEAR(ai.data<float>()[i], ci.data<float>()[i], 1e-5);
  for (const Json& cfg : {Json{{"axis", -1}}, Json{{"ord", 1}, {"axis", 1}}, Json{{"ord", 3}, {"axis", -1}, {"keepdims", true}},
                          Json{{"ord", "fro"}, {"axis", {1, 2}}}, Json{{"ord", 1}, {"axis", {1, 2}}},
                          Json{{"ord", -1}, {"axis", {2, 1}}, {"keepdims", true}}, Json{{"ord", "Infinity"}, {"axis", 2}},
                          Json{{"ord", "-Infinity"}, {"axis", {1, 2}}}})
    expect_gradients(keras_op("linalg.Norm", cfg, x0), {h});
  expect_gradients(tf_op("norm", {in(0)}, Json::object()), {h});
  expect_gradients(tf_op("compat.v1.norm", {in(0)}, {{"ord", 1}, {"axis", Json::array({1, 2})}, {"keepdims", true}}), {h});
}

// The ops that mix samples, whose values no fixture holds (numpy's results).
TEST(LinalgOps, ValuesOfOpsOverWholeTensors) {
  const Tensor a = Tensor::from_vector({2, 2}, {1, 2, 3, 4}), v = Tensor::from_vector({3}, {1, 2, 3});
  const Json xy = Json::array({in(0), in(1)}), x0 = Json::array({in(0)});
  EXPECT_EQ(values(run(keras_op("numpy.Outer", Json::object(), xy), {a, v})),
            (std::vector<float>{1, 2, 3, 2, 4, 6, 3, 6, 9, 4, 8, 12}));
  EXPECT_EQ(values(run(keras_op("numpy.Vdot", Json::object(), xy), {a, a})), (std::vector<float>{30}));
  EXPECT_EQ(values(run(keras_op("numpy.Kron", Json::object(), xy), {a, Tensor::from_vector({2}, {1, 10})})),
            (std::vector<float>{1, 10, 2, 20, 3, 30, 4, 40}));
  EXPECT_EQ(values(run(keras_op("numpy.Diag", {{"k", 1}}, x0), {Tensor::from_vector({2}, {5, 6})})),
            (std::vector<float>{0, 5, 0, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(values(run(keras_op("numpy.Diag", {{"k", -1}}, x0), {a})), (std::vector<float>{3}));
  EXPECT_EQ(values(run(keras_op("numpy.Diagflat", {{"k", -1}}, x0), {Tensor::from_vector({1, 2}, {7, 8})})),
            (std::vector<float>{0, 0, 0, 7, 0, 0, 0, 8, 0}));
  EXPECT_EQ(values(run(keras_op("numpy.Vander", Json::object(), x0), {v})), (std::vector<float>{1, 1, 1, 4, 2, 1, 9, 3, 1}));
  EXPECT_EQ(values(run(keras_op("numpy.Trace", Json::object(), x0), {a})), (std::vector<float>{5}));
  EXPECT_NEAR(values(run(keras_op("linalg.Det", Json::object(), x0), {a}))[0], -2.f, 1e-6);
  EXPECT_EQ(values(run(keras_op("linalg.Norm", {{"ord", 0}}, x0), {Tensor::from_vector({3}, {0, 2, -1})})), (std::vector<float>{2}));
  // Keras 3 renames the letters in order of appearance before tf.einsum: "ba" is the identity, where
  // numpy's implicit output would transpose; tf.einsum itself transposes.
  EXPECT_EQ(values(run(keras_op("numpy.Einsum", {{"subscripts", "ba"}}, x0), {a})), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values(run(tf_op("einsum", {"ba", in(0)}, Json::object()), {a})), (std::vector<float>{1, 3, 2, 4}));
  // Shapes inferred with unknown dims.
  EXPECT_EQ(keras_op("numpy.Einsum", {{"subscripts", "bij,jk->bik"}}, xy)->compute_output_shape({{-1, 3, 4}, {4, 5}})[0], (Shape{-1, 3, 5}));
  EXPECT_EQ(keras_op("linalg.Solve", Json::object(), xy)->compute_output_shape({{-1, 3, 3}, {-1, 3}})[0], (Shape{-1, 3}));
  EXPECT_EQ(keras_op("numpy.Slogdet", Json::object(), x0)->compute_output_shape({{-1, 3, 3}}), (std::vector<Shape>{{-1}, {-1}}));
}

TEST(LinalgOps, ErrorsNameTheOpAndTheArgument) {
  const Json x0 = Json::array({in(0)}), xy = Json::array({in(0), in(1)});
  const Tensor sq = Tensor::from_vector({2, 2}, {1, 2, 2, 4});
  auto has = [](const std::string& e, const char* what) { return e.find(what) != std::string::npos; };
  std::string e = error_of([&] { keras_op("numpy.Einsum", {{"subscripts", "ij,jk->ik"}}, xy)->compute_output_shape({{2, 3}, {4, 5}}); });
  EXPECT_TRUE(has(e, "Einsum") && has(e, "argument 'subscripts'")) << e;
  e = error_of([&] { keras_op("numpy.Einsum", {{"subscripts", "ij->ii"}}, x0)->compute_output_shape({{2, 2}}); });
  EXPECT_TRUE(has(e, "argument 'subscripts'") && has(e, "distinct")) << e;
  e = error_of([&] { keras_op("linalg.Inv", Json::object(), x0)->call({sq}, CallContext{}); });
  EXPECT_TRUE(has(e, "Inv") && has(e, "not invertible")) << e;
  e = error_of([&] { keras_op("linalg.Cholesky", Json::object(), x0)->call({sq}, CallContext{}); });
  EXPECT_TRUE(has(e, "Cholesky") && has(e, "positive definite")) << e;
  e = error_of([&] { keras_op("linalg.Norm", {{"ord", "nuc"}, {"axis", {0, 1}}}, x0)->call({sq}, CallContext{}); });
  EXPECT_TRUE(has(e, "Norm") && has(e, "argument 'ord'") && has(e, "singular values")) << e;
  e = error_of([&] { keras_op("linalg.Norm", {{"axis", 2}}, x0)->compute_output_shape({{2, 2}}); });
  EXPECT_TRUE(has(e, "argument 'axis'")) << e;
  e = error_of([&] { keras_op("linalg.Det", Json::object(), x0)->compute_output_shape({{2, 3}}); });
  EXPECT_TRUE(has(e, "Det") && has(e, "argument 'x'") && has(e, "square")) << e;
  e = error_of([&] { keras_op("linalg.Solve", Json::object(), xy)->compute_output_shape({{2, 3, 3}, {1, 3, 2}}); });
  EXPECT_TRUE(has(e, "argument 'b'")) << e;
  e = error_of([&] { keras_op("numpy.Trace", {{"axis1", 4}}, x0)->compute_output_shape({{2, 2}}); });
  EXPECT_TRUE(has(e, "Trace") && has(e, "argument 'axis1'")) << e;
  e = error_of([&] { keras_op("numpy.Cross", Json::object(), xy)->compute_output_shape({{2, 4}, {2, 3}}); });
  EXPECT_TRUE(has(e, "Cross") && has(e, "argument 'x1'")) << e;
  e = error_of([&] { tf_op("linalg.diag", {in(0)}, {{"k", Json::array({0, 1})}})->compute_output_shape({{2, 3}}); });
  EXPECT_TRUE(has(e, "linalg.diag") && has(e, "argument 'k'")) << e;
  e = error_of([&] { tf_op("linalg.inv", {in(0)}, {{"adjoint", true}})->call({sq}, CallContext{}); });
  EXPECT_TRUE(has(e, "argument 'adjoint'")) << e;
}

}  // namespace
}  // namespace kerascpp
