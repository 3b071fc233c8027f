// Recurrent layers on inference plans (src/models/plan_recurrent_steps.cpp): SimpleRNN, LSTM and GRU
// run the interpreter's fast loop on the plan's buffers, so their results are the interpreter's bit for
// bit, stateful streams included (the states stay the caller's RnnStates). Parity with Keras is the
// sequence fixtures' (tests/fixtures/seq_*, stateful_rnn), which now run on these plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "plan_test_util.h"
#include "kerascpp/kerascpp.h"
#include "models/functional.h"

namespace kerascpp {
namespace {

using layers::Input;
using testing::graph_of;
using testing::identical;
using testing::ramp;

// Every weight away from its initial value (a bias of zeros would hide a missing bias add).
void perturb(Model& m) {
  size_t i = 0;
  for (const VariablePtr& w : m.weights()) {
    Tensor t = w->numpy();
    for (int64_t j = 0; j < t.size(); ++j)
      t.data<float>()[j] = 0.3f * std::sin(static_cast<float>(j * 7 + i * 13)) + 0.05f;
    w->assign(t);
    ++i;
  }
}

// Dense -> the recurrent layer -> Dense, on (batch, 5, 3) sequences.
Model recurrent_model(const std::string& cls, Json options, const Json& input_options = Json::object()) {
  auto x = Input({5, 3}, input_options);
  auto h = layers::Dense({{"units", 4}, {"activation", "tanh"}})(x);
  options["units"] = 6;
  h = layers::layer(cls, options)(h);
  Model m({x}, {layers::Dense({{"units", 2}})(h)});
  perturb(m);
  return m;
}

TEST(InferencePlanRecurrent, GivesTheInterpretersBitsForEveryLayerAndOption) {
  for (const char* cls : {"SimpleRNN", "LSTM", "GRU"})
    for (bool sequences : {false, true})
      for (bool backwards : {false, true}) {
        const bool bias = !(sequences && backwards);  // one case without a bias
        SCOPED_TRACE(std::string(cls) + (sequences ? " return_sequences" : "") + (backwards ? " go_backwards" : "") +
                     (bias ? "" : " use_bias=False"));
        const Model m = recurrent_model(cls, {{"return_sequences", sequences}, {"go_backwards", backwards},
                                              {"use_bias", bias}});
        const models::Functional& g = graph_of(m);
        ASSERT_NE(g.inference_plan(), nullptr) << g.why_not_planned();
        EXPECT_EQ(g.inference_plan()->steps(), 3u);
        for (int64_t batch : {1, 3, 8}) {
          const std::vector<Tensor> in = {ramp({batch, 5, 3})};
          EXPECT_TRUE(identical(m.predict(in, batch)[0], g.call_graph(in, CallContext{})[0])) << "batch " << batch;
        }
        // 37 rows: the plan runs blocks of 16, 16 and 5 rows (kernels::for_row_blocks), on one thread
        // or two; the interpreter steps the whole batch at once. The same bits.
        const std::vector<Tensor> in37 = {ramp({37, 5, 3})};
        const Tensor want37 = g.call_graph(in37, CallContext{})[0];
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          EXPECT_TRUE(identical(m.predict(in37, 37)[0], want37)) << "batch 37, threads " << threads;
        }
        set_num_threads(0);
        // predict in batches of 3: the plan on each batch's rows, written into one output.
        const Tensor x = ramp({8, 5, 3});
        const Tensor batched = m.predict({x}, 3)[0];
        for (int64_t start = 0; start < 8; start += 3) {
          const int64_t n = std::min<int64_t>(3, 8 - start);
          EXPECT_TRUE(identical(batched.slice(start, n), g.call_graph({x.slice(start, n)}, CallContext{})[0]));
        }
      }
}

TEST(InferencePlanRecurrent, GruWithoutResetAfterAndOtherActivationsStayInterpreted) {
  const Model a = recurrent_model("GRU", {{"reset_after", false}});
  EXPECT_EQ(graph_of(a).inference_plan(), nullptr);
  EXPECT_NE(graph_of(a).why_not_planned().find("GRU"), std::string::npos) << graph_of(a).why_not_planned();
  const Model b = recurrent_model("LSTM", {{"activation", "softmax"}});
  EXPECT_EQ(graph_of(b).inference_plan(), nullptr);
  EXPECT_NE(graph_of(b).why_not_planned().find("op loop"), std::string::npos) << graph_of(b).why_not_planned();
}

// A stateful LSTM streamed one step per call: each call starts from the states the last one left in
// the caller's RnnStates, as the interpreter's, and a tensor of them the caller took keeps its values.
TEST(InferencePlanRecurrent, StatefulStreamsKeepTheirStates) {
  for (const char* cls : {"LSTM", "GRU", "SimpleRNN"}) {
    SCOPED_TRACE(cls);
    auto x = Input({1, 3}, {{"batch_size", 2}});
    auto y = layers::layer(cls, {{"units", 4}, {"stateful", true}})(layers::Dense({{"units", 5}})(x));
    Model m({x}, {y});
    perturb(m);
    const models::Functional& g = graph_of(m);
    ASSERT_NE(g.inference_plan(), nullptr) << g.why_not_planned();
    EXPECT_TRUE(g.inference_plan()->stateful());
    RnnStates planned, interpreted;
    Tensor taken, snapshot;
    for (int call = 0; call < 6; ++call) {
      const std::vector<Tensor> in = {ramp({2, 1, 3}, call)};
      CallContext ctx;
      ctx.rnn_states = &interpreted;
      const Tensor want = g.call_graph(in, ctx)[0];
      EXPECT_TRUE(identical(m(in, planned)[0], want)) << "call " << call;
      const Layer* rnn = m.layers().back();
      ASSERT_EQ(planned.of(rnn).size(), interpreted.of(rnn).size());
      for (size_t i = 0; i < planned.of(rnn).size(); ++i) EXPECT_TRUE(identical(planned.of(rnn)[i], interpreted.of(rnn)[i]));
      if (call == 2) taken = planned.of(rnn)[0], snapshot = interpreted.of(rnn)[0].copy();  // the caller holds it now
    }
    EXPECT_TRUE(identical(taken, snapshot));  // later calls did not write into the tensor the caller took
    EXPECT_FALSE(identical(taken, planned.of(m.layers().back())[0]));
    // Another batch: the model's fixed batch refuses it, from the interpreter.
    EXPECT_THROW(m({ramp({3, 1, 3})}, planned), ValueError);
    planned.reset_states();  // back to zeros, as a new stream
    RnnStates fresh;
    CallContext ctx;
    ctx.rnn_states = &fresh;
    EXPECT_TRUE(identical(m({ramp({2, 1, 3})}, planned)[0], g.call_graph({ramp({2, 1, 3})}, ctx)[0]));
  }
}

}  // namespace
}  // namespace kerascpp
