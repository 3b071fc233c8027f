// KERASCPP_VERBOSE=dispatch: one line per plan (not per call), in the documented format.
#include "kernels/dispatch_log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "kerascpp/autodiff.h"
#include "op_test_util.h"
#include "ops/ops.h"
#include "ops/plan_cache.h"

namespace kerascpp::ops {
namespace {

int count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

TEST(DispatchLog, OneLinePerPlanNotPerCall) {
  std::mt19937 g(5);
  Tensor k = test::random_tensor(g, {3, 3, 2, 4}), x1 = test::random_tensor(g, {1, 6, 6, 2}),
         x2 = test::random_tensor(g, {2, 6, 6, 2});
  ConvOptions o;
  o.strides = {1, 1};
  o.dilation_rate = {1, 1};
  PlanCache plans;
  setenv("KERASCPP_VERBOSE", "dispatch", 1);
  kernels::reread_dispatch_verbose();
  testing::internal::CaptureStderr();
  Tensor a = conv(x1, k, Tensor(), o, &plans, 0);
  Tensor b = conv(x1, k, Tensor(), o, &plans, 0);  // the same plan: no line
  (void)conv(x2, k, Tensor(), o, &plans, 0);       // another input shape: another plan
  const std::string err = testing::internal::GetCapturedStderr();
  unsetenv("KERASCPP_VERBOSE");
  kernels::reread_dispatch_verbose();
  EXPECT_EQ(
      count_lines_starting(err, "kerascpp_verbose,dispatch,conv,x=(1, 6, 6, 2) kernel=(3, 3, 2, 4),onednn"),
      1)
      << err;
  EXPECT_EQ(
      count_lines_starting(err, "kerascpp_verbose,dispatch,conv,x=(2, 6, 6, 2) kernel=(3, 3, 2, 4),onednn"),
      1)
      << err;
  EXPECT_EQ(count_lines_starting(err, "kerascpp_verbose,dispatch,"), 2) << err;
  test::expect_close(b, a.shape(), std::vector<double>(a.data<float>(), a.data<float>() + a.size()), 0, 0,
                     "the cached plan computes what the new one did");
}

TEST(DispatchLog, ListAndFormat) {
  for (const char* v : {"dispatch", "all", "plans,dispatch"}) {
    setenv("KERASCPP_VERBOSE", v, 1);
    kernels::reread_dispatch_verbose();
    EXPECT_TRUE(kernels::dispatch_verbose()) << v;
  }
  setenv("KERASCPP_VERBOSE", "dispatcher", 1);
  kernels::reread_dispatch_verbose();
  EXPECT_FALSE(kernels::dispatch_verbose());
  unsetenv("KERASCPP_VERBOSE");
  kernels::reread_dispatch_verbose();
  EXPECT_FALSE(kernels::dispatch_verbose());
  testing::internal::CaptureStderr();
  kernels::log_dispatch("conv", "x=(1)", "ref", "not wired");  // silent: not asked for
  setenv("KERASCPP_VERBOSE", "dispatch", 1);
  kernels::reread_dispatch_verbose();
  kernels::log_dispatch("conv_transpose", "x=(1, 4, 4, 3)", "ref", "oneDNN refused: grouped");
  kernels::log_dispatch("maxpool", "x=(1, 4, 4, 3)", "onednn");
  unsetenv("KERASCPP_VERBOSE");
  kernels::reread_dispatch_verbose();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "kerascpp_verbose,dispatch,conv_transpose,x=(1, 4, 4, 3),ref,why: oneDNN refused: grouped\n"
            "kerascpp_verbose,dispatch,maxpool,x=(1, 4, 4, 3),onednn\n");
}

TEST(DispatchLog, MatmulOncePerProblemWithTheRefusals) {
  std::mt19937 g(6);
  Tensor a = test::random_tensor(g, {3, 4}), w = test::random_tensor(g, {4, 5});
  Tensor big = test::random_tensor(g, {130, 130}), w_big = test::random_tensor(g, {130, 130});
  setenv("KERASCPP_VERBOSE", "dispatch", 1);
  kernels::reread_dispatch_verbose();
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) (void)matmul(a, w);  // made at every call, printed once
  (void)matmul(big, w_big);
  const std::string err = testing::internal::GetCapturedStderr();
  unsetenv("KERASCPP_VERBOSE");
  kernels::reread_dispatch_verbose();
  EXPECT_NE(err.find("kerascpp_verbose,dispatch,matmul,(3, 4) @ (4, 5),small\n"), std::string::npos) << err;
  EXPECT_EQ(count_lines_starting(err, "kerascpp_verbose,dispatch,matmul,(3, 4) @ (4, 5),"), 1) << err;
  EXPECT_EQ(count_lines_starting(err, "kerascpp_verbose,dispatch,matmul,(130, 130) @ (130, 130),blas,why: small: "
                                      "m*n*k > 2097152"),
            1)
      << err;
}

TEST(DispatchLog, ConvGradientOncePerProblem) {
  std::mt19937 g(7);
  Tensor k = test::random_tensor(g, {3, 3, 2, 4}), x = test::random_tensor(g, {1, 6, 6, 2});
  ConvOptions o;
  o.strides = {1, 1};
  o.dilation_rate = {1, 1};
  setenv("KERASCPP_VERBOSE", "dispatch", 1);
  kernels::reread_dispatch_verbose();
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    GradientTape tape;
    tape.watch(k);
    Tensor y = conv(x, k, Tensor(), o);
    (void)tape.gradient(y, {k});
  }
  const std::string err = testing::internal::GetCapturedStderr();
  unsetenv("KERASCPP_VERBOSE");
  kernels::reread_dispatch_verbose();
  EXPECT_EQ(count_lines_starting(err, "kerascpp_verbose,dispatch,conv_grad,x=(1, 6, 6, 2) kernel=(3, 3, 2, 4),onednn"),
            1)
      << err;
}

}  // namespace
}  // namespace kerascpp::ops
