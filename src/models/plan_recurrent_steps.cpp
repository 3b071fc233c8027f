// SimpleRNN, LSTM and GRU (and RNN over one of their cells) as inference-plan steps: the
// interpreter's fast loop (layers::Rnn::fast_loop, the one run_fast takes) on the plan's buffers, so
// the numbers are the interpreter's bit for bit. Every step's input product is one matmul over rows x
// steps; each step is the cell's fast_step on the states, a batch's blocks of rows on the threads. A
// stateful layer's states are the caller's (RnnStates, layer.h): InferencePlan hands them to
// run_stateful and keeps them between calls.
#include "models/plan_recurrent_steps.h"

#include <algorithm>
#include <vector>

#include "layers/rnn/rnn.h"

namespace kerascpp::models {
namespace {

class RecurrentStep : public PlanStep {
 public:
  // width: the projection's (gates x units, the kernel's columns).
  static constexpr size_t kMaxStates = layers::RnnCell::kMaxFastStates;
  RecurrentStep(const layers::Rnn& rnn, int64_t steps, int64_t width)
      : rnn_(rnn), cell_(rnn.cell()), steps_(steps), width_(width), count_(cell_.state_count()) {
    KCPP_ASSERT(count_ <= kMaxStates);
    for (size_t i = 0; i < count_; ++i) {
      state_offsets_.push_back(state_floats_);
      state_floats_ += cell_.state_units(i);
    }
  }

  void run(const float* const* in, float* out, int64_t rows, float* scratch) const override {
    float* zeros = scratch + own_scratch(rows);  // a layer that keeps no states starts from zeros
    std::fill(zeros, zeros + rows * state_floats_, 0.f);
    float* states[kMaxStates];
    for (size_t i = 0; i < count_; ++i) states[i] = zeros + rows * state_offsets_[i];
    run_stateful(in, out, rows, scratch, states);
  }

  void run_stateful(const float* const* in, float* out, int64_t rows, float* scratch,
                    float* const* states) const override {
    float* xp = scratch;
    const bool projected = cell_.fast_project(in[0], xp, rows * steps_);
    KCPP_ASSERT(projected);  // make_recurrent_plan_step takes only cells that have both fast paths
    layers::Rnn::FastLoop f;
    f.xp = xp;
    f.states = states;
    (rnn_.return_sequences() ? f.sequence : f.last) = out;
    f.scratch = xp + rows * steps_ * width_;
    const bool ran = rnn_.fast_loop(f, rows, steps_, width_);
    KCPP_ASSERT(ran);  // never false: the cell has a fast step (make_recurrent_plan_step)
  }

  int64_t scratch_floats(int64_t rows) const override { return own_scratch(rows) + rows * state_floats_; }
  const Layer* state_layer() const override { return rnn_.stateful() ? &rnn_ : nullptr; }
  std::vector<int64_t> state_widths() const override {
    std::vector<int64_t> w;
    for (size_t i = 0; i < count_; ++i) w.push_back(cell_.state_units(i));
    return w;
  }

 private:
  // The projections of every step, then the loop's scratch.
  int64_t own_scratch(int64_t rows) const {
    return rows * steps_ * width_ + rnn_.fast_loop_floats(rows, width_);
  }

  const layers::Rnn& rnn_;  // the model keeps the layer alive
  const layers::RnnCell& cell_;
  int64_t steps_, width_;
  size_t count_;
  std::vector<int64_t> state_offsets_;  // per state: its offset in a block of rows x state_floats_
  int64_t state_floats_ = 0;
};

}  // namespace

std::unique_ptr<PlanStep> make_recurrent_plan_step(const Layer& layer, const Shape& x, const Shape& output,
                                                   std::string* why) {
  const auto* rnn = dynamic_cast<const layers::Rnn*>(&layer);
  if (!rnn) return nullptr;
  auto refuse = [&](const std::string& reason) -> std::unique_ptr<PlanStep> {
    *why = "layer '" + layer.name() + "' (" + layer.class_name() + ") " + reason;
    return nullptr;
  };
  const layers::RnnCell& cell = rnn->cell();
  const std::string cls = cell.class_name();
  if (cls != "SimpleRNNCell" && cls != "LSTMCell" && cls != "GRUCell") return refuse("runs a " + cls);
  if (!cell.has_fast_step())
    return refuse("runs the op loop (a GRU with reset_after=False, or activations the fast loop does not run)");
  if (x.size() != 3) return refuse("reads sequences of shape " + shape_str(x));
  int64_t width = -1;  // the kernel's columns: gates x units
  for (const VariablePtr& v : cell.weights())
    if (v->name() == "kernel" && v->shape().size() == 2 && v->shape()[0] == x[2]) width = v->shape()[1];
  if (width <= 0) return refuse("has no kernel for " + std::to_string(x[2]) + " features");
  const Shape want = rnn->return_sequences() ? Shape{-1, x[1], cell.units()} : Shape{-1, cell.units()};
  if (want.size() != output.size() || !std::equal(want.begin() + 1, want.end(), output.begin() + 1))
    return refuse("writes " + shape_str(output));
  return std::make_unique<RecurrentStep>(*rnn, x[1], width);
}

}  // namespace kerascpp::models
