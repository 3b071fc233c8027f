// Model::call_into: a call into the caller's output tensors, the form of a real-time loop (one sample per
// call). It gives model(x)'s values bit for bit, planned or interpreted, stateful streams included, and a
// warm call on a plan makes no allocation. Bad outputs are refused by name.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "../test_errors.h"
#include "plan_test_util.h"

// Counts this binary's operator new calls on the calling thread (the allocation test reads it around
// a loop of warm calls); everything else is malloc's. Not under a sanitizer, which brings its own
// operator new (and would pair its nothrow form with this delete).
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KCPP_NO_NEW_COUNT
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KCPP_NO_NEW_COUNT
#endif
namespace {
thread_local long tl_news = 0;
}
#ifndef KCPP_NO_NEW_COUNT
void* operator new(std::size_t n) {
  ++tl_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++tl_news;
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace kerascpp {
namespace {

using layers::Input;
using testing::error_of;
using testing::graph_of;
using testing::identical;
using testing::ramp;

// The streamed model of the issue: Dense(8, tanh) -> stateful LSTM(8) -> Dense(1), one sample per call.
Model streamed_lstm() {
  auto x = Input({1, 1}, {{"batch_size", 1}});
  auto h = layers::Dense({{"units", 8}, {"activation", "tanh"}})(x);
  h = layers::layer("LSTM", {{"units", 8}, {"stateful", true}})(h);
  Model m({x}, {layers::Dense({{"units", 1}})(h)});
  size_t i = 0;
  for (const VariablePtr& w : m.weights()) {  // away from the initial zeros of the biases
    Tensor t = w->numpy();
    for (int64_t j = 0; j < t.size(); ++j) t.data<float>()[j] += 0.1f * static_cast<float>((j + i) % 5) - 0.2f;
    w->assign(t);
    ++i;
  }
  return m;
}

TEST(CallInto, StreamsTheSameBitsAsModelCallsAndAllocatesNothingWhenWarm) {
  const Model m = streamed_lstm();
  ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
  RnnStates by_call, by_into;
  const std::vector<Tensor> x{Tensor::empty({1, 1, 1})}, y{Tensor::empty({1, 1})};
  for (int step = 0; step < 20; ++step) {
    x[0].data<float>()[0] = 0.37f * static_cast<float>(step % 7) - 1.f;
    const Tensor want = m({x[0].copy()}, by_call)[0];
    m.call_into(x, y, &by_into);
    EXPECT_TRUE(identical(y[0], want)) << "step " << step;
  }
  const Layer* lstm = m.layers()[2];
  ASSERT_EQ(by_into.of(lstm).size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(identical(by_into.of(lstm)[i], by_call.of(lstm)[i]));
#ifdef KCPP_NO_NEW_COUNT
  GTEST_SKIP() << "allocations are counted outside sanitizer builds";
#endif
  long before = tl_news;
  for (int step = 0; step < 100; ++step) m.call_into(x, y, &by_into);
  EXPECT_EQ(tl_news - before, 0) << "operator new calls in 100 warm calls";
  before = tl_news;
  (void)m(x, by_call);  // the counter sees what a call that makes its output allocates
  EXPECT_GT(tl_news - before, 0);
}

TEST(CallInto, InterpretedModelsAndOverlappingOutputsGiveModelCallsValues) {
  // GRU(reset_after=False) is not planned: the graph computes and call_into copies.
  auto x = Input({4, 3});
  Model gru({x}, {layers::layer("GRU", {{"units", 5}, {"reset_after", false}})(x)});
  ASSERT_EQ(graph_of(gru).inference_plan(), nullptr);
  const std::vector<Tensor> in{ramp({2, 4, 3})}, out{Tensor::empty({2, 5})};
  gru.call_into(in, out);
  EXPECT_TRUE(identical(out[0], gru(in)[0]));
  // An output that is the input's own memory: the plan cannot write it as it goes; the result is the same.
  auto d = Input({6});
  Model dense({d}, {layers::Dense({{"units", 6}, {"activation", "relu"}})(d)});
  ASSERT_NE(graph_of(dense).inference_plan(), nullptr);
  const Tensor v = ramp({3, 6}), want = dense({v.copy()})[0];
  dense.call_into({v}, {v});
  EXPECT_TRUE(identical(v, want));
}

TEST(CallInto, RefusesOutputsOfAnotherCountDtypeOrShapeByName) {
  auto d = Input({6});
  Model m({d}, {layers::Dense({{"units", 2}})(d)}, "scorer");
  const std::vector<Tensor> in{ramp({3, 6})};
  EXPECT_NE(error_of([&] { m.call_into(in, {}); }).find("Model 'scorer' has 1 output(s), but 0 output tensors were given"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.call_into(in, {Tensor::empty({3, 2}, DType::int32)}); })
                .find("Output 0 of model 'scorer' is written into a float32 tensor. Received: int32"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.call_into(in, {Tensor()}); }).find("Received: an empty tensor"), std::string::npos);
  for (const Shape& wrong : {Shape{3, 3}, Shape{2, 2}, Shape{3, 2, 1}})
    EXPECT_NE(error_of([&] { m.call_into(in, {Tensor::empty(wrong)}); })
                  .find("Output 0 of model 'scorer' has shape (3, 2) for these inputs, but the tensor given for it has "
                        "shape " + shape_str(wrong)),
              std::string::npos)
        << shape_str(wrong);
  EXPECT_NE(error_of([&] { m.call_into({ramp({3, 5})}, {Tensor::empty({3, 2})}); }).find("scorer"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp
