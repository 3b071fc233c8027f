// Inference plans (src/models/inference_plan.h): which graphs are planned, and that a planned call
// gives the interpreter's result bit for bit (Functional::call_graph: the same kernels in the same
// order), on fixtures written by Keras and on graphs built here that exercise views, in-place steps,
// outputs read by later layers, repeated outputs and memory reuse. Parity with Keras itself is checked
// by every fixture test, which now runs on the plan wherever a model is planned.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "../test_errors.h"
#include "../test_paths.h"
#include "kerascpp/kerascpp.h"
#include "models/functional.h"
#include "plan_test_util.h"

namespace kerascpp {
namespace {

using layers::Input;
using testing::error_of;
using testing::expect_matches;
using testing::graph_of;
using testing::identical;
using testing::inputs_for;
using testing::ramp;

// The plan's outputs against the interpreter's, bit for bit, at several batch sizes (1: the GEMV
// sizes; 300: past the small matmul's threshold for wide layers).
void expect_plan_matches_graph(const Model& m) {
  const models::Functional& g = graph_of(m);
  ASSERT_NE(g.inference_plan(), nullptr) << g.why_not_planned();
  for (int64_t batch : {1, 7, 300}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const std::vector<Tensor> in = inputs_for(m, batch);
    ASSERT_TRUE(g.inference_plan()->takes(in, CallContext{}));
    const std::vector<Tensor> planned = m.predict(in, batch), interpreted = g.call_graph(in, CallContext{});
    ASSERT_EQ(planned.size(), interpreted.size());
    for (size_t j = 0; j < planned.size(); ++j) expect_matches(planned[j], interpreted[j], g.inference_plan()->exact(), j);
    // predict in batches of 64 writes each batch into its rows of one output: the interpreter's
    // batches, concatenated.
    const std::vector<Tensor> batched = m.predict(in, 64);
    for (int64_t start = 0; start < batch; start += 64) {
      std::vector<Tensor> rows;
      for (const Tensor& t : in) rows.push_back(t.slice(start, std::min<int64_t>(64, batch - start)));
      const std::vector<Tensor> want = g.call_graph(rows, CallContext{});
      for (size_t j = 0; j < want.size(); ++j)
        expect_matches(batched[j].slice(start, want[j].dim(0)), want[j], g.inference_plan()->exact(), j);
    }
  }
}

TEST(InferencePlan, KerasMlpsArePlannedAndMatchTheInterpreter) {
  for (const char* file : {"seed_mlp_2x10/keras3/model.keras", "seed_mlp_2x10/keras2_emulated/model.h5",
                           "deep_mlp_activations/keras3/model.keras", "deep_mlp_activations/tf_keras/model.h5"}) {
    SCOPED_TRACE(file);
    const std::string path = testing::fixture(file);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is written by make fixtures";
    expect_plan_matches_graph(load_model(path));
  }
}

TEST(InferencePlan, EveryPlannedFixtureMatchesTheInterpreter) {
  int planned = 0, models = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(testing::fixture(""))) {
    if (e.path().filename() != "model.keras") continue;
    std::unique_ptr<Model> m;
    try {
      m = std::make_unique<Model>(load_model(e.path().string()));
    } catch (const std::exception&) {
      continue;  // damaged and refused fixtures have their own tests
    }
    ++models;
    if (!graph_of(*m).inference_plan()) continue;
    ++planned;
    if (graph_of(*m).inference_plan()->stateful()) continue;  // inference_plan_recurrent_test.cpp, stateful_test.cpp
    SCOPED_TRACE(e.path().string());
    expect_plan_matches_graph(*m);
  }
  std::printf("%d of %d fixture models are planned\n", planned, models);
  EXPECT_GT(models, 100);
  EXPECT_GE(planned, 47);  // 50 when this was written
}

TEST(InferencePlan, AGraphWithALayerThePlanDoesNotTakeIsInterpretedAndSaysWhy) {
  auto x = Input({6, 4}, {{"name", "x"}});
  auto y = layers::layer("UnitNormalization", {{"name", "unit"}})(x);
  Model m({x}, {layers::Dense({{"units", 2}, {"name", "d"}})(y)});
  EXPECT_EQ(graph_of(m).inference_plan(), nullptr);
  EXPECT_EQ(graph_of(m).why_not_planned(), "layer 'unit' (UnitNormalization) is not planned");
  EXPECT_EQ(m.predict({ramp({2, 6, 4})})[0].shape(), (Shape{2, 6, 2}));
}

TEST(InferencePlan, ViewsInPlaceStepsAndSharedOutputs) {
  // x (3, 4) -> Flatten -> Dense(16, relu) -> Dropout -> Dense(16) -> Activation(tanh) -> Reshape (4, 4)
  //          -> Dense(5, softmax) on the last axis; outputs: the softmax, the tanh (read by a later
  //          layer), the flattened input (a view of an input) and the softmax again.
  auto x = Input({3, 4}, {{"name", "x"}});
  auto flat = layers::Flatten({{"name", "flat"}})(x);
  auto h = layers::Dense({{"units", 16}, {"activation", "relu"}, {"name", "h"}})(flat);
  auto d = layers::Dropout({{"rate", 0.5}, {"name", "drop"}})(h);
  auto g = layers::Dense({{"units", 16}, {"name", "g"}})(d);
  auto t = layers::Activation({{"activation", "tanh"}, {"name", "t"}})(g);
  auto r = layers::Reshape({{"target_shape", {4, 4}}, {"name", "r"}})(t);
  auto s = layers::Dense({{"units", 5}, {"activation", "softmax"}, {"name", "s"}})(r);
  Model m({x}, {s, t, flat, s}, "views");
  expect_plan_matches_graph(m);
  const std::vector<Tensor> out = m.predict({ramp({2, 3, 4})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 5}));
  EXPECT_TRUE(identical(out[0], out[3]));
  EXPECT_FALSE(out[0].shares_storage(out[3]));  // each output is its own tensor
  EXPECT_TRUE(identical(out[2], ramp({2, 3, 4}).reshape({2, 12})));
}

TEST(InferencePlan, MergesConcatenationsReluAndBatchNormalization) {
  // x (5, 6) -> Dense(6) = a; BatchNormalization(a) = b; ReLU(6, 0.1, 0.5)(b) = r;
  // Add([a, b, a]), Average([a, r]), Subtract([r, a]), Maximum([a, r]), Concatenate on axes -1 and 1,
  // BatchNormalization over axis 1 (not the last), then Dense on the flattened join.
  auto x = Input({5, 6}, {{"name", "x"}});
  auto a = layers::Dense({{"units", 6}, {"activation", "tanh"}, {"name", "a"}})(x);
  auto b = layers::BatchNormalization({{"name", "bn"}})(a);
  auto r = layers::ReLU({{"max_value", 0.6}, {"negative_slope", 0.1}, {"threshold", 0.05}, {"name", "relu"}})(b);
  auto sum = layers::Add({{"name", "sum"}})({a, b, a});
  auto avg = layers::Average({{"name", "avg"}})({a, r});
  auto diff = layers::Subtract({{"name", "diff"}})({r, a});
  auto most = layers::Maximum({{"name", "most"}})({a, r});
  auto last = layers::Concatenate({{"name", "cat_last"}})({sum, avg, diff});
  auto mid = layers::Concatenate({{"axis", 1}, {"name", "cat_mid"}})({last, layers::Concatenate({{"name", "pad"}})({most, most, most})});
  auto bn1 = layers::BatchNormalization({{"axis", 1}, {"name", "bn_axis1"}})(mid);
  auto y = layers::Dense({{"units", 3}, {"name", "out"}})(layers::Flatten({{"name", "flat"}})(bn1));
  Model m({x}, {y, mid});
  // Statistics away from the initial zeros and ones, so that the fold matters.
  std::vector<Tensor> w = m.get_weights();
  for (size_t i = 0; i < w.size(); ++i)
    for (int64_t j = 0; j < w[i].size(); ++j) w[i].data<float>()[j] += 0.25f + 0.01f * static_cast<float>((i * 7 + j) % 13);
  m.set_weights(w);
  expect_plan_matches_graph(m);
  EXPECT_EQ(m.predict({ramp({2, 5, 6})})[1].shape(), (Shape{2, 10, 18}));
  // New statistics are folded again at the next call.
  for (Tensor& t : w) t.data<float>()[0] *= 3.f;
  m.set_weights(w);
  expect_plan_matches_graph(m);
}

TEST(InferencePlan, LayerNormalizationOverOneBlockOfAxes) {
  auto x = Input({3, 4, 5}, {{"name", "x"}});
  auto a = layers::LayerNormalization({{"name", "last"}})(x);
  auto b = layers::LayerNormalization({{"axis", Json::array({1, 2})}, {"name", "block"}})(a);
  auto c = layers::LayerNormalization({{"axis", 1}, {"rms_scaling", true}, {"name", "rms_middle"}})(b);
  auto d = layers::LayerNormalization({{"axis", -1}, {"center", false}, {"scale", false}, {"name", "bare"}})(c);
  Model m({x}, {d});
  std::vector<Tensor> w = m.get_weights();
  for (size_t i = 0; i < w.size(); ++i)
    for (int64_t j = 0; j < w[i].size(); ++j) w[i].data<float>()[j] += 0.1f * static_cast<float>((i + j) % 5) - 0.2f;
  m.set_weights(w);
  expect_plan_matches_graph(m);
  auto y = Input({3, 4, 5}, {{"name", "y"}});
  Model apart({y}, {layers::LayerNormalization({{"axis", Json::array({1, 3})}, {"name", "apart"}})(y)});
  EXPECT_EQ(graph_of(apart).why_not_planned(),
            "layer 'apart' (LayerNormalization) normalises over axes that are not one block of sample axes");
  EXPECT_EQ(apart.predict({ramp({2, 3, 4, 5})})[0].shape(), (Shape{2, 3, 4, 5}));
}

TEST(InferencePlan, BroadcastingMergesAreInterpreted) {
  auto x = Input({4}, {{"name", "x"}});
  auto one = layers::Dense({{"units", 1}, {"name", "one"}})(x);
  Model m({x}, {layers::Add({{"name", "add"}})({x, one})});
  EXPECT_EQ(graph_of(m).why_not_planned(), "layer 'add' (Add) broadcasts its inputs (None, 1) to (None, 4)");
}

TEST(InferencePlan, ALongChainReusesItsMemory) {
  auto x = Input({32}, {{"name", "x"}});
  KerasTensor y = x;
  for (int i = 0; i < 10; ++i) {
    y = layers::Dense({{"units", 32}, {"name", "d" + std::to_string(i)}})(y);
    y = layers::Activation({{"activation", i % 2 ? "sigmoid" : "gelu"}, {"name", "a" + std::to_string(i)}})(y);
  }
  Model m({x}, {y});
  expect_plan_matches_graph(m);
  // Twenty values of 32 floats per sample; by liveness two buffers take them all (the last Dense writes
  // the output tensor, and every activation runs in place).
  EXPECT_EQ(graph_of(m).inference_plan()->floats_per_row(), 64);
}

TEST(InferencePlan, WarmCallsReuseOneWorkspacePerCaller) {
  auto x = Input({8}, {{"name", "x"}});
  Model m({x}, {layers::Dense({{"units", 4}, {"activation", "relu"}})(layers::Dense({{"units", 64}})(x))});
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr);
  for (int64_t batch : {1, 1000, 3, 1})
    for (int i = 0; i < 5; ++i) m.predict(inputs_for(m, batch), batch);
  EXPECT_EQ(plan->workspaces(), 1u);  // one caller at a time: one workspace, grown once to 1,000 rows
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) m.predict(inputs_for(m, 5));
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(plan->workspaces(), 5u);  // at most one more per thread that ran beside another
}

// 100,000 rows of 128 floats of values (51 MB) run in chunks of kChunkBytes: the workspace holds one
// chunk, and the result is predict's in batches of the chunk size.
TEST(InferencePlan, ALargeBatchRunsInChunksInABoundedWorkspace) {
  auto x = Input({64}, {{"name", "x"}});
  auto h = layers::Dense({{"units", 64}, {"activation", "relu"}})(layers::Dense({{"units", 64}})(x));
  Model m({x}, {layers::Dense({{"units", 1}})(h)});
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->floats_per_row(), 128);
  const int64_t chunk = plan->chunk_rows(100000);
  EXPECT_EQ(chunk, static_cast<int64_t>(models::InferencePlan::kChunkBytes / (128 * sizeof(float))));
  EXPECT_EQ(plan->chunk_rows(chunk), chunk);
  const std::vector<Tensor> in = inputs_for(m, 100000);
  const Tensor whole = m.predict(in, 100000)[0];
  EXPECT_EQ(plan->workspaces(), 1u);
  EXPECT_EQ(plan->idle_workspace_bytes(), models::InferencePlan::kChunkBytes);  // one chunk's values, no scratch
  EXPECT_TRUE(identical(whole, m.predict(in, chunk)[0]));
}

// A model with more bytes of weights than kChunkBytes runs chunks of as many bytes of values (each
// chunk reads every weight once), up to kMaxChunkBytes; a model with fewer keeps kChunkBytes.
TEST(InferencePlan, ChunksGrowWithTheWeightsUpToABound) {
  auto dense_model = [](int64_t in, int64_t units) {
    auto x = Input({in}, {{"name", "x"}});
    auto h = layers::Dense({{"units", units}, {"kernel_initializer", "zeros"}, {"activation", "relu"}})(x);
    return Model({x}, {layers::Dense({{"units", 8}})(h)});  // h is the workspace's value
  };
  Model small = dense_model(64, 64);
  EXPECT_EQ(graph_of(small).inference_plan()->chunk_bytes(), models::InferencePlan::kChunkBytes);
  Model mid = dense_model(1024, 4096);  // 4,231,176 weights: 16.9 MB
  const models::InferencePlan* plan = graph_of(mid).inference_plan();
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->floats_per_row(), 4096);
  const size_t weight_bytes = (1024 * 4096 + 4096 + 4096 * 8 + 8) * sizeof(float);
  EXPECT_EQ(plan->chunk_bytes(), weight_bytes);
  const auto row_bytes = static_cast<int64_t>(plan->floats_per_row() * sizeof(float));
  EXPECT_EQ(plan->chunk_rows(100000), static_cast<int64_t>(weight_bytes) / row_bytes);
  const std::vector<Tensor> in = inputs_for(mid, 1200);
  const Tensor whole = mid.predict(in, 1200)[0];
  EXPECT_LE(plan->idle_workspace_bytes(), weight_bytes);
  EXPECT_TRUE(identical(whole, mid.predict(in, plan->chunk_rows(1200))[0]));
  Model big = dense_model(4096, 4200);  // 69 MB of weights
  EXPECT_EQ(graph_of(big).inference_plan()->chunk_bytes(), models::InferencePlan::kMaxChunkBytes);
}

// A model whose one sample has 16.8 MB of values runs one row at a time and keeps its workspace
// between calls (it is what the model needs, and no batch makes it bigger).
TEST(InferencePlan, AWorkspaceHoldsAtMostOneChunk) {
  auto x = Input({4200000}, {{"name", "x"}});
  auto h = layers::Activation({{"activation", "relu"}, {"name", "r"}})(x);
  Model m({x}, {layers::Activation({{"activation", "tanh"}, {"name", "t"}})(h)});
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr);
  ASSERT_GT(plan->floats_per_row() * sizeof(float), models::InferencePlan::kChunkBytes);
  EXPECT_EQ(plan->chunk_rows(3), 1);
  const std::vector<Tensor> in = inputs_for(m, 3);
  const Tensor y = m.predict(in, 3)[0];
  const size_t held = plan->idle_workspace_bytes();
  EXPECT_GE(held, static_cast<size_t>(plan->floats_per_row()) * sizeof(float));
  EXPECT_LT(held, 2 * static_cast<size_t>(plan->floats_per_row()) * sizeof(float));
  EXPECT_EQ(plan->workspaces(), 1u);
  for (int64_t r = 0; r < 3; ++r)
    EXPECT_TRUE(identical(y.slice(r, 1), graph_of(m).call_graph({in[0].slice(r, 1)}, CallContext{})[0]));
}

TEST(InferencePlan, CallsThePlanDoesNotTakeAreInterpreted) {
  auto x = Input({4}, {{"name", "x"}});
  auto y = layers::Dense({{"units", 3}, {"name", "d"}})(layers::Dropout({{"rate", 0.9}, {"name", "drop"}})(x));
  Model m({x}, {y});
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr);
  const Tensor in = ramp({64, 4});
  CallContext training;
  training.training = true;
  EXPECT_FALSE(plan->takes({in}, training));
  EXPECT_FALSE(identical(m.call_training({in}, 7)[0], m.predict({in})[0]));  // dropout acts in training
  EXPECT_FALSE(plan->takes({ramp({64, 5})}, CallContext{}));
  EXPECT_NE(error_of([&] { m.predict({ramp({2, 5})}); }).find("is incompatible with the model: expected shape=(None, 4), "
                                                               "found shape=(2, 5)"),
            std::string::npos);
  EXPECT_FALSE(plan->takes({Tensor::zeros({0, 4})}, CallContext{}));
  EXPECT_EQ(m.predict({Tensor::zeros({0, 4})})[0].shape(), (Shape{0, 3}));
  std::vector<Tensor> masks{Tensor::zeros({64})};
  CallContext masked;
  masked.masks = &masks;
  EXPECT_FALSE(plan->takes({in}, masked));
}

// A call the plan does not take (a masked input here) is interpreted, and its big tensors (1 MiB or
// more: the LSTMs' projections of every step, 256 x 40 x 128 floats, 5 MB) take the pages the call before
// freed (Functional::call, core/mapping_cache.h). The pages are the model's, one set per caller that ran
// beside another, bounded, and never change a result.
TEST(InferencePlan, InterpretedCallsTakeThePagesOfTheCallBefore) {
  auto x = Input({40, 16}, {{"name", "x"}});
  auto h =
      layers::LSTM({{"units", 32}, {"return_sequences", true}})(layers::Masking({{"mask_value", 0.0}})(x));
  Model m({x}, {layers::LSTM({{"units", 16}})(h)});
  const models::Functional& g = graph_of(m);
  ASSERT_EQ(g.inference_plan(), nullptr);
  Tensor in = ramp({256, 40, 16});
  for (int64_t b = 0; b < 256; ++b)  // row b's last b % 40 steps are masked
    for (int64_t t = 40 - b % 40; t < 40; ++t) std::fill_n(in.data<float>() + (b * 40 + t) * 16, 16, 0.f);
  EXPECT_EQ(g.idle_page_bytes(), 0u);
  const Tensor first = m.predict({in}, 256)[0];
  const size_t held = g.idle_page_bytes();
  EXPECT_GE(held, size_t{256} * 40 * 128 * sizeof(float));
  EXPECT_LE(held, MappingCachePool::kHeldBytes);
  EXPECT_TRUE(identical(first, m.predict({in}, 256)[0]));
  EXPECT_EQ(g.idle_page_bytes(), held);  // the same sizes took the same pages back
  EXPECT_TRUE(identical(first, g.call_graph({in}, CallContext{})[0]));  // no pages kept: the same bits
  std::vector<std::thread> threads;
  std::atomic<int> differ{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) differ += !identical(first, m.predict({in}, 256)[0]);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(differ.load(), 0);
  // Every lease came back, and there is at most one set of pages per thread that ran at once.
  EXPECT_GE(g.idle_page_bytes(), held);
  EXPECT_LE(g.idle_page_bytes(), 4 * held);
}

TEST(InferencePlan, CallsFixedToTrainingAndCustomLayersAreNotPlanned) {
  auto x = Input({4}, {{"name", "x"}});
  LayerRef drop = layers::Dropout({{"rate", 0.5}, {"name", "mc"}});
  Model m({x}, {drop(x, Json{{"training", true}})});
  EXPECT_EQ(graph_of(m).inference_plan(), nullptr);
  EXPECT_EQ(graph_of(m).why_not_planned(), "layer 'mc' (Dropout) is called with a fixed training=");

  // A caller's own layer under a built-in class name runs its own call().
  struct NotDense : Layer {
    using Layer::Layer;
    std::string class_name() const override { return "Dense"; }
    std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override { return in; }
    std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override { return in; }
  };
  LoadOptions options;
  options.custom_objects["Dense"] = [](const Json& c) { return std::make_shared<NotDense>(c); };
  Model custom = load_model(testing::fixture("seed_mlp_2x10/keras3/model.keras"), options);
  EXPECT_EQ(graph_of(custom).inference_plan(), nullptr);
}

TEST(InferencePlan, NewWeightsAreSeenByThePlan) {
  Model m = load_model(testing::fixture("seed_mlp_2x10/keras3/model.keras"));
  const Tensor in = ramp({3, m.input_shapes()[0][1]});
  const Tensor before = m.predict({in})[0];
  std::vector<Tensor> w = m.get_weights();
  for (Tensor& t : w)
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] *= 0.5f;
  m.set_weights(w);
  const Tensor after = m.predict({in})[0];
  EXPECT_FALSE(identical(before, after));
  EXPECT_TRUE(identical(after, graph_of(m).call_graph({in}, CallContext{})[0]));
}

// A BatchNormalization step reads its statistics at every call, so values written in place through
// the storage are seen at once; one folded into the linear Dense before it sees them once its
// variables say so (assign(), or mark_updated() after writing in place: Variable's contract, as for
// oneDNN's convolution weights).
TEST(InferencePlan, StatisticsWrittenInPlaceAreSeenByBatchNormalization) {
  for (const char* activation : {"tanh", "linear"}) {
    SCOPED_TRACE(activation);
    auto x = Input({4}, {{"name", "x"}});
    LayerRef bn = layers::BatchNormalization({{"name", "bn"}});
    Model m({x}, {bn(layers::Dense({{"units", 4}, {"activation", activation}, {"name", "d"}})(x))});
    ASSERT_NE(graph_of(m).inference_plan(), nullptr);
    const bool folded = std::string(activation) == "linear";
    EXPECT_EQ(graph_of(m).inference_plan()->fused(), folded ? 1u : 0u);
    const Tensor in = ramp({3, 4}), before = m.predict({in})[0];
    for (const VariablePtr& v : bn->weights())  // through the storage, as numpy views of Variable.value write
      if (v->name() == "moving_mean") {
        v->value().data<float>()[1] = 5.f;
        if (folded) v->mark_updated();
      }
    const Tensor after = m.predict({in})[0];
    EXPECT_FALSE(identical(before, after));
    expect_matches(after, graph_of(m).call_graph({in}, CallContext{})[0], !folded, 0);
  }
}

// A linear Dense takes in the BatchNormalization over its units and the relu after it: one matmul whose
// store applies the folded bias and the relu.
TEST(InferencePlan, DenseTakesInBatchNormalizationAndRelu) {
  auto x = Input({3, 6}, {{"name", "x"}});
  auto h = layers::Dense({{"units", 8}, {"name", "d1"}})(x);
  h = layers::ReLU({{"name", "r1"}})(layers::BatchNormalization({{"name", "bn1"}})(h));
  auto g = layers::Dense({{"units", 5}, {"use_bias", false}, {"name", "d2"}})(h);
  g = layers::Activation({{"activation", "relu"}, {"name", "r2"}})(layers::BatchNormalization({{"center", false}, {"name", "bn2"}})(g));
  auto k = layers::Dense({{"units", 4}, {"activation", "relu"}, {"name", "d3"}})(g);  // relu first: the BN after stays
  Model m({x}, {layers::BatchNormalization({{"name", "bn3"}})(k)});
  std::vector<Tensor> w = m.get_weights();
  for (size_t i = 0; i < w.size(); ++i)
    for (int64_t j = 0; j < w[i].size(); ++j) w[i].data<float>()[j] += 0.25f + 0.01f * static_cast<float>((i * 7 + j) % 13);
  m.set_weights(w);
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->fused(), 4u);
  EXPECT_EQ(plan->steps(), 4u);
  EXPECT_FALSE(plan->exact());
  expect_plan_matches_graph(m);
  for (Tensor& t : w) t.data<float>()[0] *= 3.f;  // assign() through set_weights: folded again
  m.set_weights(w);
  expect_plan_matches_graph(m);
}

TEST(InferencePlan, RandomCropAndReluWithNaNAreInterpreted) {
  // RandomCrop passes its input through at inference in Keras 3, but crops and resizes in tf_keras:
  // never a view, whatever its shapes.
  auto x = Input({4, 16, 3}, {{"name", "x"}});
  auto crop = layers::layer("RandomCrop", {{"height", 8}, {"width", 8}, {"name", "crop"}})(x);
  Model cropped({x}, {crop});
  EXPECT_EQ(graph_of(cropped).why_not_planned(), "layer 'crop' (RandomCrop) is not planned");
  auto y = Input({4}, {{"name", "y"}});
  Model relu({y}, {layers::ReLU({{"threshold", std::nan("")}, {"name", "relu"}})(y)});
  EXPECT_EQ(graph_of(relu).why_not_planned(), "layer 'relu' (ReLU) has a NaN argument (ops::relu refuses it when called)");
  EXPECT_NE(error_of([&] { relu.predict({ramp({2, 4})}); }).find("must not be NaN"), std::string::npos);
}

TEST(InferencePlan, KerascppPlanOffInterpretsEveryGraph) {
  setenv("KERASCPP_PLAN", "off", 1);
  Model m = load_model(testing::fixture("seed_mlp_2x10/keras3/model.keras"));
  unsetenv("KERASCPP_PLAN");
  EXPECT_EQ(graph_of(m).inference_plan(), nullptr);
  EXPECT_EQ(graph_of(m).why_not_planned(), "KERASCPP_PLAN=off");
}

}  // namespace
}  // namespace kerascpp
