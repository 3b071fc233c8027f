// A convolution recorded inside a layer (a PlanCache given) runs on the layer's training plan: made
// once per input shape and set of gradients, however often the kernel changes, and bit for bit what
// a call without a layer computes (a plan made for that call), forward and backward.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kerascpp/autodiff.h"
#include "kernels/dispatch_log.h"
#include "op_test_util.h"
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

// y and the gradients of sum(y * w) for the watched ones of k, b, x.
std::vector<Tensor> step(const Case& c, const Tensor& x, const Tensor& k, const Tensor& b, bool watch_x,
                         PlanCache* plans) {
  GradientTape tape;
  std::vector<Tensor> sources = {k};
  if (b.defined()) sources.push_back(b);
  if (watch_x) sources.push_back(x);
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
      for (bool watch_x : {true, false}) {
        const std::string what = std::string(c.what) + (with_bias ? ", bias" : "") + (watch_x ? ", dx" : "");
        const int64_t out_channels = c.transpose ? c.k[c.k.size() - 2] : c.k.back();
        Tensor x = test::random_tensor(g, c.x);
        Tensor b = with_bias ? test::random_tensor(g, {out_channels}) : Tensor();
        PlanCache plans;
        for (int s = 0; s < 3; ++s) {  // a new kernel every step, as an optimizer gives
          Tensor k = test::random_tensor(g, c.k);
          expect_same_bits(step(c, x, k, b, watch_x, &plans), step(c, x, k, b, watch_x, nullptr),
                           what + ", step " + std::to_string(s));
        }
        EXPECT_EQ(plans.size(), 1u) << what << ": one training plan for every step";
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
  for (int s = 0; s < 3; ++s) (void)step(c, x, test::random_tensor(g, c.k), b, false, &plans);
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
