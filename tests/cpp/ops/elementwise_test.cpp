// binary (with broadcasting), prelu and scale_shift against a double-precision formula and the
// reference kernel.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/ref/ref.h"
#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

double apply(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::add:
      return a + b;
    case BinaryOp::subtract:
      return a - b;
    case BinaryOp::multiply:
      return a * b;
    case BinaryOp::divide:
      return a / b;
    case BinaryOp::maximum:
      return std::max(a, b);
    case BinaryOp::minimum:
      return std::min(a, b);
    case BinaryOp::prelu:
      return std::max(a, 0.0) + b * std::min(a, 0.0);
  }
  return 0;
}

// Element i of `out` taken from t by numpy broadcasting: align right, a dim of 1 repeats.
double broadcast_at(const Tensor& t, const Shape& out, int64_t i) {
  int64_t off = 0, stride = 1;
  for (int d = static_cast<int>(out.size()) - 1, e = t.rank() - 1; d >= 0; --d, --e) {
    int64_t idx = i % out[d];
    i /= out[d];
    if (e >= 0) {
      off += (idx % t.dim(e)) * stride;
      stride *= t.dim(e);
    }
  }
  return t.data<float>()[off];
}

std::vector<double> binary_double(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& out) {
  std::vector<double> want(shape_size(out));
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = apply(op, broadcast_at(a, out, i), broadcast_at(b, out, i));
  return want;
}

const auto& kOps = kernels::kAllBinary;

TEST(Binary, NamedBroadcastCases) {
  std::mt19937 g(200);
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{4, 1, 3}, {2, 3}, {4, 2, 3}}, {{2, 3}, {2, 3}, {2, 3}}, {{5, 4}, {4}, {5, 4}},
      {{5, 4}, {5, 1}, {5, 4}},       {{}, {3, 2}, {3, 2}},     {{1}, {}, {1}},
      {{3, 1}, {1, 4}, {3, 4}},       {{0, 3}, {1, 3}, {0, 3}}, {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}}};
  for (const Case& c : cases) {
    Tensor a = test::random_tensor(g, c.a, -2.f, 2.f), b = test::random_tensor(g, c.b, 0.5f, 2.f);
    for (BinaryOp op : kOps) {
      test::expect_close(
          binary(op, a, b), c.out, binary_double(op, a, b, c.out), 1e-7, 1e-6,
          shape_str(c.a) + " " + std::string(binary_name(op)) + " " + shape_str(c.b));
    }
  }
}

TEST(Binary, RandomBroadcastShapesMatchDoubleAndRef) {
  std::mt19937 g(201);
  for (int trial = 0; trial < 150; ++trial) {
    Shape out = test::random_shape(g, static_cast<int>(g() % 5), 5);
    // Each operand: drop some leading dims, set some dims to 1.
    auto operand = [&] {
      Shape s(out.begin() + g() % (out.size() + 1), out.end());
      for (auto& d : s)
        if (g() % 3 == 0) d = 1;
      return s;
    };
    Shape sa = operand(), sb = operand();
    Shape want_shape = broadcast_shape(sa, sb);
    Tensor a = test::random_tensor(g, sa, -2.f, 2.f), b = test::random_tensor(g, sb, 0.5f, 2.f);
    for (BinaryOp op : kOps)
      test::expect_close(binary(op, a, b), want_shape, binary_double(op, a, b, want_shape), 1e-7, 1e-6,
                         "trial " + std::to_string(trial));
  }
  // The same through the reference kernel, on a case with every kind of broadcast dim.
  Tensor a = test::random_tensor(g, {4, 1, 3}), b = test::random_tensor(g, {2, 3});
  const int64_t shape[] = {4, 2, 3}, as[] = {3, 0, 1}, bs[] = {0, 3, 1};
  std::vector<float> r(24);
  kernels::ref::binary(kernels::Binary::add, a.data<float>(), as, b.data<float>(), bs, r.data(), shape, 3);
  test::expect_close(binary(BinaryOp::add, a, b), {4, 2, 3}, std::vector<double>(r.begin(), r.end()), 0, 1e-7,
                     "add vs ref");
}

TEST(Binary, RejectsBadInput) {
  EXPECT_EQ(test::value_error([] {
              binary(BinaryOp::add, Tensor::zeros({2, 3}), Tensor::zeros({4}));
            }),
            "add: Cannot broadcast shapes (2, 3) and (4,)");
  std::string msg =
      test::value_error([] { binary(BinaryOp::multiply, Tensor::zeros({2}), test::int_tensor({2})); });
  EXPECT_TRUE(test::contains(msg, "multiply") && test::contains(msg, "int32")) << msg;
  EXPECT_THROW(binary(BinaryOp::add, Tensor(), Tensor::zeros({2})), ValueError);
}

TEST(Prelu, MatchesFormulaWithSharedAxes) {
  std::mt19937 g(202);
  // PReLU(shared_axes=[1]) on (batch, 3, 4): alpha (1, 4).
  Tensor x = test::random_tensor(g, {2, 3, 4}, -3.f, 3.f), alpha = test::random_tensor(g, {1, 4}, 0.f, 0.5f);
  std::vector<double> want(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    double v = x.data<float>()[i], al = alpha.data<float>()[i % 4];
    want[i] = std::max(v, 0.0) + al * std::min(v, 0.0);
  }
  test::expect_close(prelu(x, alpha), {2, 3, 4}, want, 1e-7, 1e-6, "prelu");
  // alpha may not grow x.
  EXPECT_THROW(prelu(Tensor::zeros({3}), Tensor::zeros({2, 3})), ValueError);
  EXPECT_THROW(prelu(Tensor::zeros({2, 3}), Tensor::zeros({2})), ValueError);
}

TEST(ScaleShift, MatchesFormula) {
  std::mt19937 g(203);
  Tensor x = test::random_tensor(g, {2, 5, 3}, 0.f, 255.f);
  std::vector<double> want(x.size());
  for (int64_t i = 0; i < x.size(); ++i) want[i] = double(x.data<float>()[i]) * (1.f / 127.5f) - 1.0;
  test::expect_close(scale_shift(x, 1.f / 127.5f, -1.f), {2, 5, 3}, want, 1e-6, 1e-6, "scale_shift");
  EXPECT_THROW(scale_shift(test::int_tensor({2}), 1.f, 0.f), ValueError);
}

}  // namespace
}  // namespace kerascpp::ops
