// SimpleRNN, LSTM and GRU beyond what the Keras fixtures show (tests/fixtures/seq_*: predictions of
// both writers, masks, go_backwards, return_state, initial_state): gradients through time against
// finite differences, masks holding the state, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kerascpp/autodiff.h"
#include "kerascpp/error.h"
#include "kerascpp/layer.h"
#include "kerascpp/threading.h"
#include "layer_test_util.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

LayerPtr rnn(const std::string& cls, Json extra, const Shape& input) {
  Json c = {{"name", "r"}, {"units", 3}};
  for (const auto& [k, v] : extra.items()) c[k] = v;
  LayerPtr l = make_layer(cls, c);
  l->build({input});
  std::mt19937 g(11);
  std::vector<Tensor> w;
  for (const VariablePtr& v : l->weights()) w.push_back(random(g, v->shape()));
  l->set_weights(w);
  return l;
}

TEST(Rnn, WeightGradientsThroughTimeMatchFiniteDifferences) {
  std::mt19937 g(3);
  const Tensor x = random(g, {2, 5, 4});
  Tensor mask = Tensor::from_vector({2, 5}, {1, 1, 0, 1, 1, 1, 1, 1, 0, 0});
  const std::vector<Tensor> masks{mask};
  struct Case {
    const char* cls;
    Json extra;
    bool masked;
  };
  const Case cases[] = {
      {"SimpleRNN", {{"return_sequences", true}}, false},
      {"SimpleRNN", {{"go_backwards", true}}, true},
      {"LSTM", {}, false},
      {"LSTM", {{"return_sequences", true}, {"go_backwards", true}}, true},
      {"GRU", {}, true},
      {"GRU", {{"reset_after", false}, {"return_sequences", true}}, true},
  };
  for (const Case& c : cases) {
    LayerPtr l = rnn(c.cls, c.extra, {2, 5, 4});
    CallContext ctx;
    if (c.masked) ctx.masks = &masks;
    std::string where;
    // float32 forward passes with a step of 1e-2: errors of a few 1e-3 at most; a wrong gradient is O(1).
    EXPECT_LE(worst_weight_gradient_error(*l, {x}, ctx, &where), 2e-2) << c.cls << " " << c.extra.dump() << ": " << where;
  }
}

TEST(Rnn, StackedCellsGradientsMatchFiniteDifferencesAndTrainingRefusesInnerDropout) {
  std::mt19937 g(6);
  auto cell = [](const char* cls, int units, float dropout) {
    return Json{{"class_name", cls}, {"config", {{"units", units}, {"dropout", dropout}}}};
  };
  const Json stack = {{"class_name", "StackedRNNCells"},
                      {"config", {{"cells", {cell("LSTMCell", 3, 0.f), cell("GRUCell", 2, 0.f), cell("SimpleRNNCell", 2, 0.f)}}}}};
  LayerPtr l = rnn("RNN", {{"cell", stack}, {"return_sequences", true}, {"return_state", true}}, {2, 4, 3});
  EXPECT_EQ(l->weights().size(), 9u);
  EXPECT_EQ(l->weights()[3]->path(), "r/stacked_rnn_cells/gru_cell/kernel");
  const Tensor x = random(g, {2, 4, 3});
  const Tensor mask = Tensor::from_vector({2, 4}, {1, 0, 1, 1, 1, 1, 1, 0});
  const std::vector<Tensor> masks{mask};
  CallContext ctx;
  ctx.masks = &masks;
  const std::vector<Tensor> out = l->call({x}, ctx);
  ASSERT_EQ(out.size(), 5u);  // sequences, LSTM h and c, GRU h, SimpleRNN h
  EXPECT_EQ(out[2].shape(), (Shape{2, 3}));
  EXPECT_EQ(out[3].shape(), (Shape{2, 2}));
  std::string where;
  // Three cells deep, central differences at a step of 1e-2 are off by ~3e-5 where the gradient is
  // near the 1e-3 floor (3e-2 relative); a wrong gradient or sign scores O(1).
  EXPECT_LE(worst_weight_gradient_error(*l, {x}, ctx, &where), 5e-2) << where;
  const Json dropped = {{"class_name", "StackedRNNCells"}, {"config", {{"cells", {cell("LSTMCell", 3, 0.5f)}}}}};
  LayerPtr d = rnn("RNN", {{"cell", dropped}}, {2, 4, 3});
  CallContext train;
  train.training = true;
  try {
    d->call({x}, train);
    ADD_FAILURE() << "training with dropout inside a stack should be refused";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("Layer 'r' (RNN): training a stack of cells with dropout"), std::string::npos);
  }
  EXPECT_EQ(d->call({x}, {})[0].shape(), (Shape{2, 3}));  // inference has no dropout
}

TEST(Rnn, CuDnnWeightsAreConvertedAsKerassLoaderDoesAndBadOnesNamed) {
  // tests/fixtures/cudnn_rnn checks the numbers against Keras's conversion; here the layout of one gate.
  LayerPtr l = rnn("GRU", {{"kerascpp_cudnn", "CuDNNGRU"}, {"reset_after", true}}, {1, 2, 2});
  EXPECT_FALSE(l->get_config().contains("kerascpp_cudnn"));
  std::vector<float> k(2 * 9), r(3 * 9), b(18);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i);
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(100 + i);
  const std::vector<Tensor> w = l->from_legacy_layout(
      {Tensor::from_vector({2, 9}, k), Tensor::from_vector({3, 9}, r), Tensor::from_vector({18}, b)});
  ASSERT_EQ(w.size(), 3u);
  // Gate 0's input block [[0, 1, 2], [9, 10, 11]] read as cuDNN's (3, 2) [[0, 1], [2, 9], [10, 11]], transposed.
  const float want[2][3] = {{0, 2, 10}, {1, 9, 11}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(w[0].data<float>()[i * 9 + j], want[i][j]);
  EXPECT_EQ(w[1].data<float>()[0 * 9 + 1], 100.f + 9);  // recurrent blocks transposed
  EXPECT_EQ(w[2].shape(), (Shape{2, 9}));
  try {
    l->from_legacy_layout({Tensor::from_vector({2, 9}, k), Tensor::from_vector({3, 9}, r), Tensor::from_vector({9}, std::vector<float>(9))});
    ADD_FAILURE() << "a bias of the wrong size should be refused";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Layer 'r' (CuDNNGRU read as GRU) expects"), std::string::npos) << e.what();
  }
}

TEST(Rnn, InputGradientsMatchFiniteDifferences) {
  std::mt19937 g(4);
  for (const char* cls : {"SimpleRNN", "LSTM", "GRU"}) {
    LayerPtr l = rnn(cls, {{"return_sequences", true}}, {2, 4, 3});
    const GradientCheck c = check_gradients([&](const std::vector<Tensor>& in) { return l->call(in, {})[0]; },
                                            {random(g, {2, 4, 3})}, 1e-2);
    EXPECT_LE(c.max_error, 2e-2) << cls << ": " << c.worst;
  }
}

TEST(Rnn, MaskedStepsKeepTheStateAndRepeatTheOutput) {
  std::mt19937 g(6);
  const Tensor x = random(g, {1, 4, 2});
  LayerPtr l = rnn("LSTM", {{"return_sequences", true}, {"return_state", true}}, {1, 4, 2});
  const std::vector<Tensor> masks{Tensor::from_vector({1, 4}, {1, 1, 0, 0})};
  CallContext ctx;
  ctx.masks = &masks;
  const std::vector<Tensor> masked = l->call({x}, ctx);
  // The same as running the first two steps only.
  const std::vector<Tensor> two = l->call({ops::slice(x, {0, 0, 0}, {1, 2, 2})}, {});
  for (int64_t u = 0; u < 3; ++u) {
    EXPECT_EQ(masked[0].data<float>()[3 * 3 + u], two[0].data<float>()[1 * 3 + u]);  // output repeated
    EXPECT_EQ(masked[1].data<float>()[u], two[1].data<float>()[u]);                  // h
    EXPECT_EQ(masked[2].data<float>()[u], two[2].data<float>()[u]);                  // c
  }
  // zero_output_for_mask gives zeros at the masked steps instead.
  LayerPtr z = rnn("LSTM", {{"return_sequences", true}, {"zero_output_for_mask", true}}, {1, 4, 2});
  const Tensor y = z->call({x}, ctx)[0];
  for (int64_t u = 0; u < 3; ++u) EXPECT_EQ(y.data<float>()[3 * 3 + u], 0.f);
}

// Inference without a tape takes the raw-buffer loop (fast_step); with a tape, the taped one (LSTM and
// GRU: one op per sequence, ops::lstm_sequence / gru_sequence; SimpleRNN and GRU(reset_after=False):
// op by op). Both compute the same numbers with the same kernels in the same order: equal to the bit
// where no step is masked (a masked step may differ in the sign of a zero).
TEST(Rnn, TheInferenceLoopComputesWhatTheTapedLoopComputes) {
  // The inference loop's outputs against the op-by-op loop's: the same bits, or (masked) the same values.
  auto expect_same = [](const LayerPtr& l, const Tensor& x, const std::vector<Tensor>* masks,
                        const std::string& what) {
    CallContext ctx;
    ctx.masks = masks;
    const std::vector<Tensor> fast = l->call({x}, ctx);
    std::vector<Tensor> taped;
    {
      GradientTape tape;  // any active tape sends the layer through the op-by-op loop
      taped = l->call({x}, ctx);
    }
    ASSERT_EQ(fast.size(), taped.size());
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_EQ(fast[i].shape(), taped[i].shape());
      for (int64_t k = 0; k < fast[i].size(); ++k) {
        const float a = fast[i].data<float>()[k], b = taped[i].data<float>()[k];
        EXPECT_TRUE(masks ? a == b : std::memcmp(&a, &b, sizeof a) == 0)
            << what << (masks ? " masked" : "") << " output " << i << "[" << k << "]: " << a << " vs " << b;
      }
    }
  };
  std::mt19937 g(9);
  const Tensor x = random(g, {3, 6, 4}, 1.f);
  const std::vector<Tensor> masks{Tensor::from_vector({3, 6}, {1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1})};
  const Json cases[] = {{{"return_sequences", true}},
                        {{"return_state", true}, {"go_backwards", true}},
                        {{"return_sequences", true}, {"zero_output_for_mask", true}, {"activation", "relu"}}};
  // Projections past the small matmul's sizes (160 rows x 128 features into 3-4 x 64 columns) take the
  // BLAS, with the bias added after it.
  const Tensor wide = random(g, {4, 40, 128}, 1.f);
  Tensor wide_mask = Tensor::zeros({4, 40});
  for (int64_t i = 0; i < wide_mask.size(); ++i) wide_mask.data<float>()[i] = (i * 7) % 5 == 0 ? 0.f : 1.f;
  const std::vector<Tensor> wide_masks{wide_mask};
  for (const char* cls : {"SimpleRNN", "LSTM", "GRU"}) {
    for (const Json& extra : cases) {
      LayerPtr l = rnn(cls, extra, {3, 6, 4});
      for (bool masked : {false, true})
        expect_same(l, x, masked ? &masks : nullptr, cls + (" " + extra.dump()));
    }
    LayerPtr l = rnn(cls, {{"units", 64}, {"return_sequences", true}}, {4, 40, 128});
    for (bool masked : {false, true})
      expect_same(l, wide, masked ? &wide_masks : nullptr, cls + std::string(" wide"));
  }
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// The inference loop runs a batch's rows in blocks on the threads (kernels::for_row_blocks): 37 rows, masked
// differently, are blocks of 16, 16 and 5. Each row gets the bits it gets alone, on one thread or two.
TEST(Rnn, TheInferenceLoopsBlocksOfRowsGiveEachRowItsOwnBitsOnAnyThreads) {
  std::mt19937 g(5);
  const int64_t batch = 37, steps = 6;
  const Tensor x = random(g, {batch, steps, 4}, 1.f);
  Tensor mask = Tensor::zeros({batch, steps});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < steps; ++t)
      mask.data<float>()[b * steps + t] = (b * 7 + t * 3) % 5 != 0 ? 1.f : 0.f;
  const Json cases[] = {{{"return_sequences", true}, {"zero_output_for_mask", true}},
                        {{"return_state", true}, {"go_backwards", true}}};
  for (const char* cls : {"SimpleRNN", "LSTM", "GRU"})
    for (const Json& extra : cases) {
      SCOPED_TRACE(std::string(cls) + " " + extra.dump());
      LayerPtr l = rnn(cls, extra, {batch, steps, 4});
      const std::vector<Tensor> masks{mask};
      CallContext ctx;
      ctx.masks = &masks;
      std::vector<std::vector<Tensor>> runs;
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        runs.push_back(l->call({x}, ctx));
      }
      set_num_threads(0);
      for (size_t i = 0; i < runs[0].size(); ++i)
        EXPECT_TRUE(same_bits(runs[0][i], runs[1][i])) << "output " << i;
      for (int64_t b = 0; b < batch; ++b) {
        const std::vector<Tensor> row_mask{mask.slice(b, 1)};
        CallContext one;
        one.masks = &row_mask;
        const std::vector<Tensor> alone = l->call({x.slice(b, 1)}, one);
        for (size_t i = 0; i < alone.size(); ++i)
          EXPECT_TRUE(same_bits(runs[1][i].slice(b, 1), alone[i])) << "row " << b << ", output " << i;
      }
    }
}

TEST(Rnn, ErrorsNameTheLayerAndTheValue) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message([] { make_layer("LSTM", {{"name", "s"}, {"units", 2}, {"stateful", true}})->build({{-1, 5, 3}}); })
                .find("'s' (LSTM) is stateful, which needs a fixed batch size"),
            std::string::npos);
  LayerPtr l = rnn("GRU", {}, {2, 5, 4});
  EXPECT_NE(message([&] { l->compute_output_shape({{2, 4}}); }).find("expected ndim=3, found ndim=2"), std::string::npos);
  EXPECT_NE(message([&] { l->compute_output_shape({{2, 5, 4}, {2, 7}}); }).find("Initial state 0 of layer 'r' (GRU) must have shape (2, 3)"),
            std::string::npos);
  const std::vector<Tensor> bad{Tensor::zeros({2, 4})};
  CallContext ctx;
  ctx.masks = &bad;
  EXPECT_NE(message([&] { l->call({Tensor::zeros({2, 5, 4})}, ctx); }).find("received a mask of shape (2, 4)"),
            std::string::npos);
  for (int64_t features : {3, 5})  // inference and training alike, before any row is read
    for (bool training : {false, true}) {
      CallContext c;
      c.training = training;
      EXPECT_NE(
          message([&] {
            l->call({Tensor::zeros({2, 5, features})}, c);
          })
              .find("Input 0 of layer 'r' is incompatible with the layer: expected axis -1 of input shape to "
                    "have value 4, but received input with shape (2, 5, " +
                    std::to_string(features) + ")"),
          std::string::npos);
    }
  EXPECT_NE(message([] { make_layer("SimpleRNN", {{"name", "d"}, {"units", 2}, {"dropout", 1.5}}); }).find("dropout"),
            std::string::npos);
}

TEST(Embedding, LooksUpRowsMasksZerosAndNamesBadIndices) {
  LayerPtr e = make_layer("Embedding", {{"name", "emb"}, {"input_dim", 4}, {"output_dim", 2}, {"mask_zero", true}});
  e->build({{-1, 3}});
  e->set_weights({Tensor::from_vector({4, 2}, {0, 0, 1, 2, 3, 4, 5, 6})});
  const Tensor ids = Tensor::from_vector({1, 3}, {3, 1, 0});
  const Tensor y = e->call({ids}, {})[0];
  EXPECT_EQ(y.shape(), Shape({1, 3, 2}));
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 6), (std::vector<float>{5, 6, 1, 2, 0, 0}));
  const Tensor m = e->compute_mask({ids}, {})[0];
  EXPECT_EQ(std::vector<float>(m.data<float>(), m.data<float>() + 3), (std::vector<float>{1, 1, 0}));
  try {
    e->call({Tensor::from_vector({1, 2}, {1, 4})}, {});
    FAIL();
  } catch (const ValueError& err) {
    EXPECT_NE(std::string(err.what()).find("'emb' (Embedding, input_dim=4): take: indices[1] = 4 is not in [0, 4)"),
              std::string::npos)
        << err.what();
  }
  // The gradient adds each looked-up row's gradient back (row 1 twice).
  GradientTape tape;
  tape.watch(e->weights());
  const Tensor out = e->call({Tensor::from_vector({3}, {1, 2, 1})}, {})[0];
  const Tensor d = tape.gradient(out, e->weights())[0];
  EXPECT_EQ(std::vector<float>(d.data<float>(), d.data<float>() + 8), (std::vector<float>{0, 0, 2, 2, 1, 1, 0, 0}));
}

}  // namespace
}  // namespace kerascpp
