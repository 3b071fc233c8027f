// Op nodes from a decomposition (linalg_ops_decomposition.cpp): pinv / lstsq / matrix_rank and CTC loss /
// greedy decoding. Each differentiable op's backward against central finite differences, the inferred
// shapes, values that no fixture holds (as TensorFlow / Keras 3.15 compute them, printed by Python), and
// the errors for what kerascpp does not run. Forward values against Keras: the ops_decomposition_* fixtures.
#include <gtest/gtest.h>

#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;
using namespace op_node_testing;  // NOLINT: the helpers of every op node test

Tensor run(const LayerPtr& op, const std::vector<Tensor>& xs, size_t i = 0) { return op->call(xs, CallContext{})[i]; }
void expect_near_values(const Tensor& t, const std::vector<float>& want, float tol) {
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "at " << i;
}
// t + s on the leading diagonal of every matrix of (..., m, n): well conditioned.
Tensor plus_diag(const Tensor& t, float s) {
  Tensor r = t.copy();
  const int64_t m = t.dim(-2), n = t.dim(-1);
  for (int64_t q = 0; q < t.size() / (m * n); ++q)
    for (int64_t i = 0; i < std::min(m, n); ++i) r.data<float>()[q * m * n + i * n + i] += s;
  return r;
}
// The gradient for input `which` only, the others held (integer labels and lengths).
void expect_gradient_of(const LayerPtr& op, std::vector<Tensor> xs, size_t which) {
  std::vector<Shape> shapes;
  for (const Tensor& t : xs) shapes.push_back(t.shape());
  EXPECT_EQ(op->compute_output_shape(shapes)[0], run(op, xs).shape());
  const GradientCheck c = check_gradients(
      [&](const std::vector<Tensor>& v) {
        std::vector<Tensor> in = xs;
        in[which] = v[0];
        return run(op, in);
      },
      {xs[which]}, 1e-3);
  EXPECT_LE(c.max_error, 2e-2) << op->get_config()["call"].dump() << ": " << c.worst;
}

const Json kX = Json::array({in(0)}), kAB = Json::array({in(0), in(1)}), kCtc = Json::array({in(0), in(1), in(2), in(3)});
// Two samples of 4 frames, 3 classes; labels of 3 slots.
Tensor ctc_logits() {
  return Tensor::from_vector({2, 4, 3}, {0.5f, 1.0f, -0.3f, 0.2f, -0.1f, 0.9f, 1.1f, 0.3f, 0.0f, -0.4f, 0.8f, 0.6f,
                                         0.1f, 0.2f, 0.3f, 0.9f, -0.5f, 0.4f, 0.0f, 0.7f, -0.2f, 0.3f, 0.3f, 1.2f});
}
Tensor ctc_labels() { return Tensor::from_vector({2, 3}, {1, 1, 2, 2, 1, 0}); }
Tensor vec(std::vector<float> v) { return Tensor::from_vector({static_cast<int64_t>(v.size())}, v); }

TEST(DecompositionOps, PinvAndLstsqGradients) {
  std::mt19937 g(31);
  const Tensor wide = plus_diag(distinct(g, {2, 3, 4}), 2.f), tall = plus_diag(distinct(g, {2, 4, 3}), 2.f);
  const Tensor square = plus_diag(distinct(g, {3, 3}), 2.f);
  expect_gradients(keras_op("linalg.Pinv", Json::object(), kX), {wide});
  expect_gradients(keras_op("linalg.Pinv", Json::object(), kX), {tall});
  expect_gradients(keras_op("linalg.Pinv", {{"rcond", 0.01}}, kX), {square});
  expect_gradients(tf_op("linalg.pinv", {in(0)}, Json::object()), {tall});
  const Tensor a = plus_diag(distinct(g, {5, 3}), 2.f);
  expect_gradients(keras_op("linalg.Lstsq", Json::object(), kAB), {a, distinct(g, {5, 2})});
  expect_gradients(keras_op("linalg.Lstsq", {{"rcond", 1e-3}}, kAB), {a, distinct(g, {5})});
  expect_gradients(keras_op("linalg.Lstsq", Json::object(), kAB), {plus_diag(distinct(g, {2, 4}), 2.f), distinct(g, {2, 3})});
  const Tensor bt = distinct(g, {2, 4, 2}), bw = distinct(g, {2, 3, 2});
  expect_gradients(tf_op("linalg.lstsq", {in(0), in(1)}, Json::object()), {tall, bt});
  expect_gradients(tf_op("linalg.lstsq", {in(0), in(1)}, {{"l2_regularizer", 0.3}}), {tall, bt});
  expect_gradients(tf_op("linalg.lstsq", {in(0), in(1)}, {{"l2_regularizer", 0.3}}), {wide, bw});
  expect_gradients(tf_op("linalg.lstsq", {in(0)}, {{"rhs", in(1)}, {"fast", false}}), {tall, bt});
  expect_gradients(tf_op("linalg.lstsq", {in(0), in(1)}, {{"fast", false}}), {wide, bw});
}

TEST(DecompositionOps, CtcLossGradients) {
  const Tensor lg = ctc_logits(), lab = ctc_labels(), ll = vec({2, 3}), gl = vec({4, 3});
  expect_gradient_of(keras_op("nn.CTCLoss", Json::object(), kCtc), {lab, lg, ll, gl}, 1);
  expect_gradient_of(keras_op("nn.CTCLoss", {{"mask_index", 2}}, kCtc), {lab, lg, vec({2, 2}), vec({4, 4})}, 1);
  expect_gradient_of(tf_op("nn.ctc_loss", kCtc, {{"blank_index", -1}}), {lab, lg.reshape({4, 2, 3}), ll, gl}, 1);  // time-major
  // A tape over the logits: their gradient has their shape, and sums to 0 over each frame's classes.
  const LayerPtr op = keras_op("nn.CTCLoss", Json::object(), kCtc);
  GradientTape tape;
  tape.watch(lg);
  const Tensor d = tape.gradient(run(op, {lab, lg, ll, gl}), {lg})[0];
  ASSERT_EQ(d.shape(), lg.shape());
  for (int64_t f = 0; f < 8; ++f) EXPECT_NEAR(d.data<float>()[3 * f] + d.data<float>()[3 * f + 1] + d.data<float>()[3 * f + 2], 0.f, 1e-6f);
}

TEST(DecompositionOps, ValuesAsTensorFlowComputesThem) {
  // tf.linalg.pinv([[1, 2], [3, 4], [5, 6]]).
  expect_near_values(run(keras_op("linalg.Pinv", Json::object(), kX), {Tensor::from_vector({3, 2}, {1, 2, 3, 4, 5, 6})}),
                     {-1.3333349f, -0.33333445f, 0.66666776f, 1.0833348f, 0.33333427f, -0.41666764f}, 1e-5f);
  // keras.ops.linalg.lstsq of a vector b.
  const Tensor a = Tensor::from_vector({4, 3}, {2, 1, 0, 1, 3, 1, 0, 1, 4, 1, 0, 1});
  expect_near_values(run(keras_op("linalg.Lstsq", Json::object(), kAB), {a, vec({1, 2, 3, 4})}), {1.2333338f, -0.26666683f, 0.96666688f},
                     1e-5f);
  EXPECT_EQ(run(keras_op("linalg.MatrixRank", Json::object(), kX), {Tensor::from_vector({2, 2}, {1, 2, 2, 4})}).data<float>()[0], 1.f);
  // tf.nn.ctc_loss(labels, logits, [2, 3], [4, 3], logits_time_major=False), and where no alignment
  // exists (TF's loss is finite: log(1e-307) as float32 for the states it rules out).
  const Tensor lg = ctc_logits(), lab = ctc_labels();
  const LayerPtr tf_ctc = tf_op("nn.ctc_loss", kCtc, {{"logits_time_major", false}});
  expect_near_values(run(tf_ctc, {lab, lg, vec({2, 3}), vec({4, 3})}), {2.2623935f, 4.3623304f}, 1e-5f);
  expect_near_values(run(tf_ctc, {lab, lg, vec({2, 3}), vec({2, 1})}), {707.81897f, 707.29742f}, 1e-3f);
  expect_near_values(run(keras_op("nn.CTCLoss", {{"mask_index", 2}}, kCtc), {lab, lg, vec({2, 2}), vec({4, 4})}),
                     {2.3160768f, 2.9189415f}, 1e-5f);
  // keras.ops.ctc_decode(logits, [4, 3]): decoded (1, 2, 4) padded with -1, scores (2, 1).
  const LayerPtr dec = keras_op("nn.CTCDecode", {{"strategy", "greedy"}, {"beam_width", 100}, {"top_paths", 1}, {"merge_repeated", true},
                                                 {"mask_index", 0}}, kAB);
  const std::vector<Tensor> out = dec->call({lg, vec({4, 3})}, CallContext{});
  expect_near_values(out[0], {1, 2, 1, -1, 2, 1, -1, -1}, 0.f);
  expect_near_values(out[1], {-3.8f, -1.9f}, 1e-6f);
  const std::vector<Shape> shapes = dec->compute_output_shape({{2, 4, 3}, {2}});
  EXPECT_EQ(shapes, (std::vector<Shape>{out[0].shape(), out[1].shape()}));
}

TEST(DecompositionOps, ErrorsNameTheOpAndTheArgument) {
  std::mt19937 g(32);
  auto expect_error = [](const std::function<void()>& f, const std::vector<std::string>& parts) {
    const std::string e = error_of(f);
    for (const std::string& p : parts) EXPECT_NE(e.find(p), std::string::npos) << e;
  };
  expect_error([&] { run(keras_op("linalg.Lstsq", Json::object(), kAB), {distinct(g, {2, 3, 2}), distinct(g, {3})}); },
               {"Lstsq", "'a'", "rank 2"});
  expect_error([&] { run(keras_op("linalg.Pinv", Json::object(), kX), {distinct(g, {3})}); }, {"Pinv", "'x'"});
  expect_error([&] { run(tf_op("linalg.lstsq", {in(0), in(1)}, Json::object()), {distinct(g, {2, 3, 3}), distinct(g, {2, 4, 1})}); },
               {"linalg.lstsq", "'rhs'"});
  const Json decode = {{"strategy", "beam_search"}, {"beam_width", 100}, {"top_paths", 1}, {"merge_repeated", true}, {"mask_index", 0}};
  expect_error([&] { keras_op("nn.CTCDecode", decode, kAB)->compute_output_shape({{2, 4, 3}, {2}}); },
               {"CTCDecode", "strategy='beam_search'", "not supported"});
  const Tensor lg = ctc_logits(), lab = ctc_labels();
  expect_error([&] { run(keras_op("nn.CTCLoss", {{"mask_index", 3}}, kCtc), {lab, lg, vec({2, 3}), vec({4, 3})}); },
               {"CTCLoss", "'mask_index'"});
  expect_error([&] { run(tf_op("nn.ctc_loss", kCtc, {{"unique", Json::array({1, 2})}}), {lab, lg, vec({2, 3}), vec({4, 3})}); },
               {"ctc_loss", "'unique'"});
  const LayerPtr dec = keras_op("nn.CTCDecode", {{"strategy", "greedy"}}, kAB);
  expect_error([&] { run(dec, {lg, vec({5, 3})}); }, {"CTCDecode", "'sequence_lengths'"});
  expect_error([&] { run(keras_op("nn.CTCLoss", Json::object(), kCtc), {vec({1, 2}), lg, vec({2, 3}), vec({4, 3})}); },
               {"CTCLoss", "'target'"});
}

}  // namespace
}  // namespace kerascpp
