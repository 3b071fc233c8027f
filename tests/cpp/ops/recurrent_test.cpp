// The recurrent ops: lstm_sequence and gru_sequence (a layer's whole loop as one op) against the loop of
// ops they replace in training, and their gradients against finite differences for every input, with
// masks, go_backwards, zero_output_for_mask and recurrent dropout's mask.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include "kerascpp/autodiff.h"
#include "kerascpp/threading.h"
#include "kernels/parallel.h"
#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

using ops::UnaryOp;

struct Options {
  bool masked, backwards, zero_output, dropout;
  UnaryOp act, ract;
};

// The per-step loop of layers/rnn/rnn.cpp, op by op, packed as lstm_sequence packs it.
Tensor step_by_step(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& u, const Tensor& rm,
                    const Tensor& mask, const Options& o) {
  const int64_t batch = xp.dim(0), steps = xp.dim(1), units = h0.dim(1);
  Tensor h = h0, c = c0, y = Tensor::zeros(h0.shape());
  std::vector<Tensor> rows;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = o.backwards ? steps - 1 - s : s;
    const Tensor xt = ops::slice(xp, {0, t, 0}, {batch, 1, 4 * units}).reshape({batch, 4 * units});
    const Tensor hc = ops::lstm_step(xt, h, c, u, rm, o.act, o.ract);
    Tensor hn = ops::slice(hc, {0, 0}, {batch, units}), cn = ops::slice(hc, {0, units}, {batch, units}), yn = hn;
    if (mask.defined()) {
      const Tensor m = ops::slice(mask, {0, t}, {batch, 1});
      hn = ops::where(m, hn, h);
      cn = ops::where(m, cn, c);
      yn = ops::where(m, yn, o.zero_output ? Tensor::zeros(yn.shape()) : y);
    }
    h = hn, c = cn, y = yn;
    rows.push_back(ops::concatenate({y, h, c}, 1).reshape({batch, 1, 3 * units}));
  }
  return ops::concatenate(rows, 1);
}

TEST(LstmSequence, MatchesTheStepLoopAndItsGradientsMatchFiniteDifferences) {
  const Options cases[] = {
      {false, false, false, false, UnaryOp::tanh, UnaryOp::sigmoid},
      {true, false, false, false, UnaryOp::tanh, UnaryOp::sigmoid},
      {true, true, true, true, UnaryOp::tanh, UnaryOp::sigmoid},
      {true, true, false, true, UnaryOp::softsign, UnaryOp::tanh},
  };
  const int64_t batch = 3, steps = 4, units = 2;
  for (const Options& o : cases) {
    SCOPED_TRACE(::testing::Message() << "masked " << o.masked << " backwards " << o.backwards << " zero_output "
                                      << o.zero_output << " dropout " << o.dropout);
    std::mt19937 g(21);
    const Tensor xp = test::random_tensor(g, {batch, steps, 4 * units}), h0 = test::random_tensor(g, {batch, units});
    const Tensor c0 = test::random_tensor(g, {batch, units}), u = test::random_tensor(g, {units, 4 * units});
    // Sample 0 masks a middle step, sample 1 its first two (the initial states and zeros carry), sample 2 none.
    const Tensor mask = o.masked ? Tensor::from_vector({batch, steps}, {1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1}) : Tensor();
    const Tensor rm = o.dropout ? Tensor::from_vector({batch, units}, {2, 0, 2, 2, 0, 2}) : Tensor();
    const Tensor got = ops::lstm_sequence(xp, h0, c0, u, rm, mask, o.backwards, o.zero_output, o.act, o.ract);
    const Tensor want = step_by_step(xp, h0, c0, u, rm, mask, o);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.size(); ++i) EXPECT_EQ(got.data<float>()[i], want.data<float>()[i]) << i;
    const GradientCheck c = check_gradients(
        [&](const std::vector<Tensor>& in) {
          return ops::lstm_sequence(in[0], in[1], in[2], in[3], rm, mask, o.backwards, o.zero_output, o.act, o.ract);
        },
        {xp, h0, c0, u}, 1e-2);
    EXPECT_LE(c.max_error, 2e-2) << c.worst;
  }
}

Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::add, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::multiply, a, b); }

// keras.layers.GRUCell(reset_after=True) op by op over the steps, packed as gru_sequence packs it.
Tensor gru_step_by_step(const Tensor& xp, const Tensor& h0, const Tensor& u, const Tensor& rb, const Tensor& rm,
                        const Tensor& mask, const Options& o) {
  const int64_t batch = xp.dim(0), steps = xp.dim(1), units = h0.dim(1);
  auto cols = [&](const Tensor& t, int g) { return ops::slice(t, {0, g * units}, {batch, units}); };
  Tensor h = h0, y = Tensor::zeros(h0.shape());
  std::vector<Tensor> rows;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = o.backwards ? steps - 1 - s : s;
    const Tensor xt = ops::slice(xp, {0, t, 0}, {batch, 1, 3 * units}).reshape({batch, 3 * units});
    Tensor rec = ops::matmul(rm.defined() ? mul(h, rm) : h, u);
    if (rb.defined()) rec = ops::bias_add(rec, rb);
    const Tensor z = ops::unary(o.ract, add(cols(xt, 0), cols(rec, 0)));
    const Tensor r = ops::unary(o.ract, add(cols(xt, 1), cols(rec, 1)));
    const Tensor hh = ops::unary(o.act, add(cols(xt, 2), mul(r, cols(rec, 2))));
    Tensor hn = add(mul(z, h), mul(ops::scale_shift(z, -1.f, 1.f), hh)), yn = hn;
    if (mask.defined()) {
      const Tensor m = ops::slice(mask, {0, t}, {batch, 1});
      hn = ops::where(m, hn, h);
      yn = ops::where(m, yn, o.zero_output ? Tensor::zeros(yn.shape()) : y);
    }
    h = hn, y = yn;
    rows.push_back(ops::concatenate({y, h}, 1).reshape({batch, 1, 2 * units}));
  }
  return ops::concatenate(rows, 1);
}

TEST(GruSequence, MatchesTheStepLoopAndItsGradientsMatchFiniteDifferences) {
  const Options cases[] = {
      {false, false, false, false, UnaryOp::tanh, UnaryOp::sigmoid},
      {true, true, true, true, UnaryOp::tanh, UnaryOp::sigmoid},
      {true, false, false, true, UnaryOp::softsign, UnaryOp::tanh},
  };
  const int64_t batch = 3, steps = 4, units = 2;
  for (const Options& o : cases) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "masked " << o.masked << " backwards " << o.backwards << " zero_output "
                                        << o.zero_output << " dropout " << o.dropout << " bias " << bias);
      std::mt19937 g(22);
      const Tensor xp = test::random_tensor(g, {batch, steps, 3 * units}), h0 = test::random_tensor(g, {batch, units});
      const Tensor u = test::random_tensor(g, {units, 3 * units}), rb = bias ? test::random_tensor(g, {3 * units}) : Tensor();
      const Tensor mask = o.masked ? Tensor::from_vector({batch, steps}, {1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1}) : Tensor();
      const Tensor rm = o.dropout ? Tensor::from_vector({batch, units}, {2, 0, 2, 2, 0, 2}) : Tensor();
      const Tensor got = ops::gru_sequence(xp, h0, u, rb, rm, mask, o.backwards, o.zero_output, o.act, o.ract);
      const Tensor want = gru_step_by_step(xp, h0, u, rb, rm, mask, o);
      ASSERT_EQ(got.shape(), want.shape());
      // The same kernels in the same order; 1e-6 leaves room for a build that fuses a multiply-add.
      for (int64_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-6) << i;
      std::vector<Tensor> in{xp, h0, u};
      if (bias) in.push_back(rb);
      const GradientCheck c = check_gradients(
          [&](const std::vector<Tensor>& t) {
            return ops::gru_sequence(t[0], t[1], t[2], t.size() > 3 ? t[3] : Tensor(), rm, mask, o.backwards,
                                     o.zero_output, o.act, o.ract);
          },
          in, 1e-2);
      EXPECT_LE(c.max_error, 2e-2) << c.worst;
    }
  }
}

// lstm_sequence's and gru_sequence's outputs and gradients on rows [b0, b0 + rows) of the inputs:
// {lstm y, dxp, dh0, dc0, du, gru y, dxp, dh0, du, drb}, and last the LSTM's output without a tape.
struct SequenceInputs {
  Tensor h0, c0, xp4, u4, xp3, u3, rb, dout4, dout3, mask, rm;
};
std::vector<Tensor> run_sequences(const SequenceInputs& in, const Options& o, int64_t b0, int64_t rows) {
  auto part = [&](const Tensor& t) { return t.slice(b0, rows).copy(); };
  const Tensor h0 = part(in.h0), c0 = part(in.c0), xp4 = part(in.xp4), xp3 = part(in.xp3), mask = part(in.mask),
               rm = part(in.rm);
  std::vector<Tensor> out;
  {
    GradientTape tape;
    for (const Tensor* t : {&xp4, &h0, &c0, &in.u4}) tape.watch(*t);
    const Tensor y = ops::lstm_sequence(xp4, h0, c0, in.u4, rm, mask, o.backwards, o.zero_output, o.act, o.ract);
    out.push_back(y);
    for (const Tensor& d : tape.gradient(y, {xp4, h0, c0, in.u4}, part(in.dout4))) out.push_back(d);
  }
  {
    GradientTape tape;
    for (const Tensor* t : {&xp3, &h0, &in.u3, &in.rb}) tape.watch(*t);
    const Tensor y = ops::gru_sequence(xp3, h0, in.u3, in.rb, rm, mask, o.backwards, o.zero_output, o.act, o.ract);
    out.push_back(y);
    for (const Tensor& d : tape.gradient(y, {xp3, h0, in.u3, in.rb}, part(in.dout3))) out.push_back(d);
  }
  out.push_back(ops::lstm_sequence(xp4, h0, c0, in.u4, rm, mask, o.backwards, o.zero_output, o.act, o.ract));
  return out;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// A batch of more than one block of rows (kernels/recurrent.h for_row_blocks: blocks of 16, here 16 + 16 + 5) runs
// its blocks on the threads, with a mask, go_backwards, recurrent dropout and either
// zero_output_for_mask. Each row's output and its gradients (xp, h0, c0) have the bits of the same
// rows run alone (at most one block: no split), the kernels' gradients, sums over the rows, match
// those of the parts summed, the LSTM matches the step loop over the whole batch bit for bit (the
// small product gives a row the same bits in a block of any size), and everything is the same bits on
// 1, 2 and 3 threads.
TEST(Sequences, BlocksOfRowsGiveEachRowsBitsOnAnyNumberOfThreads) {
  const int64_t batch = 37, steps = 5, units = 3;
  std::mt19937 g(23);
  SequenceInputs in;
  in.h0 = test::random_tensor(g, {batch, units}), in.c0 = test::random_tensor(g, {batch, units});
  in.xp4 = test::random_tensor(g, {batch, steps, 4 * units}), in.u4 = test::random_tensor(g, {units, 4 * units});
  in.xp3 = test::random_tensor(g, {batch, steps, 3 * units}), in.u3 = test::random_tensor(g, {units, 3 * units});
  in.rb = test::random_tensor(g, {3 * units}), in.dout4 = test::random_tensor(g, {batch, steps, 3 * units});
  in.dout3 = test::random_tensor(g, {batch, steps, 2 * units});
  std::vector<float> m(batch * steps), r(batch * units);
  for (auto& v : m) v = g() % 4 == 0 ? 0.f : 1.f;
  for (auto& v : r) v = g() % 3 == 0 ? 0.f : 1.5f;
  in.mask = Tensor::from_vector({batch, steps}, m), in.rm = Tensor::from_vector({batch, units}, r);
  SCOPED_TRACE(::testing::Message() << "the engine runs " << kernels::detail::threads_for(1 << 20, 1)
                                    << " thread(s) here at most");
  for (const bool zero_output : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "zero_output_for_mask " << zero_output);
    const Options o{true, true, zero_output, true, UnaryOp::tanh, UnaryOp::sigmoid};
    const Tensor want = step_by_step(in.xp4, in.h0, in.c0, in.u4, in.rm, in.mask, o);
    std::vector<std::vector<Tensor>> by_threads;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      by_threads.push_back(run_sequences(in, o, 0, batch));
    }
    set_num_threads(0);
    const std::vector<Tensor>& whole = by_threads[0];
    ASSERT_TRUE(same_bits(whole[0], want));
    ASSERT_TRUE(same_bits(whole[10], whole[0])) << "the output without a tape";
    for (size_t t = 1; t < by_threads.size(); ++t)
      for (size_t k = 0; k < whole.size(); ++k) EXPECT_TRUE(same_bits(by_threads[t][k], whole[k])) << "threads " << t + 1 << " tensor " << k;
    // The rows in parts of 16, 16 and 5, each run alone.
    std::vector<double> du(whole[4].size(), 0.0), du3(whole[8].size(), 0.0), drb(whole[9].size(), 0.0);
    for (int64_t b0 = 0; b0 < batch; b0 += 16) {
      const int64_t rows = std::min<int64_t>(16, batch - b0);
      const std::vector<Tensor> p = run_sequences(in, o, b0, rows);
      for (size_t k : {0, 1, 2, 3, 5, 6, 7})
        EXPECT_TRUE(same_bits(p[k], whole[k].slice(b0, rows).copy())) << "rows from " << b0 << " tensor " << k;
      for (size_t i = 0; i < du.size(); ++i) du[i] += p[4].data<float>()[i];
      for (size_t i = 0; i < du3.size(); ++i) du3[i] += p[8].data<float>()[i];
      for (size_t i = 0; i < drb.size(); ++i) drb[i] += p[9].data<float>()[i];
    }
    // Sums over the rows and steps in another order: float32 round-off of a few terms' sizes.
    for (size_t i = 0; i < du.size(); ++i) EXPECT_NEAR(whole[4].data<float>()[i], du[i], 1e-5 * (1 + std::fabs(du[i]))) << i;
    for (size_t i = 0; i < du3.size(); ++i) EXPECT_NEAR(whole[8].data<float>()[i], du3[i], 1e-5 * (1 + std::fabs(du3[i]))) << i;
    for (size_t i = 0; i < drb.size(); ++i) EXPECT_NEAR(whole[9].data<float>()[i], drb[i], 1e-5 * (1 + std::fabs(drb[i]))) << i;
  }
}

// No rows, or no steps: empty outputs and gradients of the inputs' shapes (zeros where nothing flows).
TEST(Sequences, NoRowsOrNoStepsGiveEmptyOutputs) {
  for (const auto& [batch, steps] : {std::pair<int64_t, int64_t>{0, 4}, {20, 0}}) {
    SCOPED_TRACE(::testing::Message() << "batch " << batch << " steps " << steps);
    const int64_t units = 3;
    const Tensor h0 = Tensor::zeros({batch, units}), xp4 = Tensor::zeros({batch, steps, 4 * units});
    const Tensor u4 = Tensor::zeros({units, 4 * units}), xp3 = Tensor::zeros({batch, steps, 3 * units});
    const Tensor u3 = Tensor::zeros({units, 3 * units}), rb = Tensor::zeros({3 * units});
    GradientTape tape;
    for (const Tensor* t : {&h0, &xp4, &u4, &xp3, &u3, &rb}) tape.watch(*t);
    const Tensor y4 = ops::lstm_sequence(xp4, h0, h0, u4, Tensor(), Tensor(), false, false, UnaryOp::tanh, UnaryOp::sigmoid);
    const Tensor y3 = ops::gru_sequence(xp3, h0, u3, rb, Tensor(), Tensor(), false, false, UnaryOp::tanh, UnaryOp::sigmoid);
    EXPECT_EQ(y4.shape(), Shape({batch, steps, 3 * units}));
    EXPECT_EQ(y3.shape(), Shape({batch, steps, 2 * units}));
    const std::vector<Tensor> g4 = tape.gradient(y4, {xp4, u4}, Tensor::zeros(y4.shape()));
    EXPECT_EQ(g4[0].shape(), xp4.shape());
    EXPECT_EQ(g4[1].shape(), u4.shape());
    for (int64_t i = 0; i < g4[1].size(); ++i) EXPECT_EQ(g4[1].data<float>()[i], 0.f);
  }
}

TEST(LstmSequence, NamesShapesThatDoNotFit) {
  const Tensor h = Tensor::zeros({2, 3});
  const std::string e = test::value_error([&] {
    ops::lstm_sequence(Tensor::zeros({2, 5, 11}), h, h, Tensor::zeros({3, 12}), Tensor(), Tensor(), false, false,
                       UnaryOp::tanh, UnaryOp::sigmoid);
  });
  EXPECT_NE(e.find("lstm_sequence: shapes do not fit: xp (2, 5, 11)"), std::string::npos) << e;
  const std::string g = test::value_error([&] {
    ops::gru_sequence(Tensor::zeros({2, 5, 9}), h, Tensor::zeros({3, 9}), Tensor::zeros({8}), Tensor(), Tensor(), false,
                      false, UnaryOp::tanh, UnaryOp::sigmoid);
  });
  EXPECT_NE(g.find("gru_sequence: shapes do not fit"), std::string::npos) << g;
}

}  // namespace
}  // namespace kerascpp
