// A convolution recorded inside a layer (a PlanCache given) runs on the layer's training plan: made
// once per input shape and set of gradients, however often the kernel changes, and bit for bit what
// a call without a layer computes (a plan made for that call), forward and backward.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kerascpp/autodiff.h"
#include "kernels/conv.h"
#include "kernels/dispatch_log.h"
#include "kernels/ref/ref.h"
#include "op_test_util.h"
#include "ops/conv_geometry.h"
#include "ops/ops.h"
#include "ops/plan_cache.h"

namespace kerascpp::ops {
namespace {

using P = Padding;

struct Case {
  const char* what;
  Shape x, k;
  ConvOptions o;
  bool transpose = false;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"conv 2D valid", {2, 7, 6, 3}, {3, 3, 3, 8}, {{1, 1}, {1, 1}, P::valid}},
      {"conv 2D same, strided", {2, 9, 8, 4}, {3, 3, 4, 6}, {{2, 2}, {1, 1}, P::same}},
      {"conv 1D causal, dilated", {2, 12, 3}, {3, 3, 5}, {{1}, {2}, P::causal}},
      {"conv grouped", {1, 6, 6, 4}, {3, 3, 2, 6}, {{1, 1}, {1, 1}, P::same, false, 2}},
      {"conv channels_first", {2, 3, 6, 5}, {3, 3, 3, 4}, {{1, 1}, {1, 1}, P::same, true}},
      {"conv 3D", {1, 4, 5, 4, 2}, {2, 2, 2, 2, 3}, {{1, 1, 1}, {1, 1, 1}, P::valid}},
      {"conv_transpose", {2, 4, 3, 5}, {3, 3, 4, 5}, {{2, 2}, {1, 1}, P::same}, true},
  };
  return all;
}

Tensor run(const Case& c, const Tensor& x, const Tensor& k, const Tensor& b, PlanCache* plans) {
  return c.transpose ? conv_transpose(x, k, b, c.o, plans) : conv(x, k, b, c.o, plans);
}

// Which of x, kernel and bias a step watches (the gradients the plan computes).
struct Watch {
  bool x, k, b;
};

// y and the gradients of sum(y * w) for the watched ones of k, b, x.
std::vector<Tensor> step(const Case& c, const Tensor& x, const Tensor& k, const Tensor& b, Watch watch,
                         PlanCache* plans) {
  GradientTape tape;
  std::vector<Tensor> sources;
  if (watch.k) sources.push_back(k);
  if (watch.b && b.defined()) sources.push_back(b);
  if (watch.x) sources.push_back(x);
  for (const Tensor& s : sources) tape.watch(s);
  Tensor y = run(c, x, k, b, plans);
  std::mt19937 g(11);
  Tensor w = test::random_tensor(g, y.shape());
  std::vector<Tensor> out = {y};
  for (const Tensor& grad : tape.gradient(y, sources, w)) out.push_back(grad);
  return out;
}

void expect_same_bits(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    test::expect_close(got[i], want[i].shape(),
                       std::vector<double>(want[i].data<float>(), want[i].data<float>() + want[i].size()), 0, 0,
                       what + ", result " + std::to_string(i));
}

TEST(ConvTrainPlan, EqualsAPlanMadeForTheCallAsTheKernelChanges) {
  std::mt19937 g(5);
  for (const Case& c : cases())
    for (bool with_bias : {true, false})
      for (Watch watch : {Watch{true, true, true}, Watch{false, true, true}, Watch{false, false, true},
                          Watch{true, false, false}}) {
        if (!with_bias && !watch.x && !watch.k) continue;  // nothing watched: nothing recorded
        const std::string what = std::string(c.what) + (with_bias ? ", bias" : "") + (watch.x ? ", dx" : "") +
                                 (watch.k ? ", dkernel" : "") + (watch.b && with_bias ? ", dbias" : "");
        const int64_t out_channels = c.transpose ? c.k[c.k.size() - 2] : c.k.back();
        Tensor x = test::random_tensor(g, c.x);
        Tensor b = with_bias ? test::random_tensor(g, {out_channels}) : Tensor();
        PlanCache plans;
        for (int s = 0; s < 3; ++s) {  // a new kernel every step, as an optimizer gives
          Tensor k = test::random_tensor(g, c.k);
          expect_same_bits(step(c, x, k, b, watch, &plans), step(c, x, k, b, watch, nullptr),
                           what + ", step " + std::to_string(s));
        }
        EXPECT_EQ(plans.size(), 1u) << what << ": one training plan for every step";
      }
}

// The plan's gradients against the reference kernels' (oneDNN sums in another order: float32
// round-off over at most a few hundred products of values in [-1, 1]).
TEST(ConvTrainPlan, GradientsAreTheReferences) {
  std::mt19937 g(8);
  for (const Case& c : cases()) {
    const int64_t out_channels = c.transpose ? c.k[c.k.size() - 2] : c.k.back();
    Tensor x = test::random_tensor(g, c.x), k = test::random_tensor(g, c.k);
    Tensor b = test::random_tensor(g, {out_channels});
    PlanCache plans;
    if (c.transpose) continue;  // conv_geometry describes a convolution; the transposed one is covered above
    const std::vector<Tensor> got = step(c, x, k, b, Watch{true, true, true}, &plans);  // y, dk, db, dx
    const kernels::ConvGeometry geo = conv_geometry(c.x, c.k, c.o, c.x[0]);
    std::mt19937 wg(11);
    Tensor w = test::random_tensor(wg, got[0].shape());
    std::vector<float> dx(x.size()), dk(k.size()), db(b.size());
    kernels::ref::conv_grad(geo, x.data<float>(), k.data<float>(), w.data<float>(), dx.data(), dk.data(), db.data());
    const std::vector<float>* want[] = {&dk, &db, &dx};
    for (int i = 0; i < 3; ++i)
      test::expect_close(got[i + 1], got[i + 1].shape(), std::vector<double>(want[i]->begin(), want[i]->end()), 1e-4,
                         1e-4, std::string(c.what) + ", gradient " + std::to_string(i));
  }
}

TEST(ConvTrainPlan, MadeOncePerProblemAndLoggedSo) {
  const Case& c = cases()[0];
  std::mt19937 g(3);
  Tensor x = test::random_tensor(g, c.x), b = test::random_tensor(g, {c.k.back()});
  PlanCache plans;
  setenv("KERASCPP_VERBOSE", "dispatch", 1);
  kernels::reread_dispatch_verbose();
  testing::internal::CaptureStderr();
  for (int s = 0; s < 3; ++s) (void)step(c, x, test::random_tensor(g, c.k), b, Watch{false, true, true}, &plans);
  (void)run(c, x, test::random_tensor(g, c.k), b, &plans);  // no tape: the inference plan
  const std::string err = testing::internal::GetCapturedStderr();
  unsetenv("KERASCPP_VERBOSE");
  kernels::reread_dispatch_verbose();
  auto count = [&](const std::string& prefix) {
    int n = 0;
    for (size_t at = err.find(prefix); at != std::string::npos; at = err.find(prefix, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("kerascpp_verbose,dispatch,conv_train,x=(2, 7, 6, 3) kernel=(3, 3, 3, 8),onednn"), 1) << err;
  EXPECT_EQ(count("kerascpp_verbose,dispatch,conv,x=(2, 7, 6, 3)"), 1) << err;
  EXPECT_EQ(plans.size(), 2u);
}

}  // namespace
}  // namespace kerascpp::ops
