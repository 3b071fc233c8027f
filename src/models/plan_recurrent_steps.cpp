// SimpleRNN, LSTM and GRU (and RNN over one of their cells) as inference-plan steps: the
// interpreter's fast loop (layers::Rnn::run_fast) on the plan's buffers, kernel for kernel, so the
// numbers are the interpreter's bit for bit. Every step's input product is one matmul over rows x
// steps; each step is the cell's fast_step on the states, a batch's blocks of rows on the threads. A
// stateful layer's states are the caller's (RnnStates, layer.h): InferencePlan hands them to
// run_stateful and keeps them between calls.
#include "models/plan_recurrent_steps.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/recurrent.h"
#include "layers/rnn/rnn.h"

namespace kerascpp::models {
namespace {

class RecurrentStep : public PlanStep {
 public:
  // width: the projection's (gates x units, the kernel's columns).
  static constexpr size_t kMaxStates = layers::RnnCell::kMaxFastStates;
  RecurrentStep(const layers::Rnn& rnn, int64_t steps, int64_t width)
      : rnn_(rnn), cell_(rnn.cell()), steps_(steps), units_(cell_.units()), width_(width), count_(cell_.state_count()) {
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
    const int64_t w = width_;
    float* xp = scratch;
    float* xp_t = xp + rows * steps_ * w;
    float* next_all = xp_t + rows * w;
    float* work = next_all + rows * state_floats_;
    const bool projected = cell_.fast_project(in[0], xp, rows * steps_);
    KCPP_ASSERT(projected);  // make_recurrent_plan_step takes only cells that have both fast paths
    const size_t o = cell_.output_state();
    // Rows [b0, b0 + r) through every step, in their rows of the states and the scratch
    // (kernels::for_row_blocks: the blocks share the threads where a step is a small product; each row
    // gets the bits of the whole batch's step). The cell's work is linear in rows (RnnCell::work_size).
    kernels::for_row_blocks(rows, units_, w, [&](int64_t b0, int64_t r) {
      float* xp_b = xp_t + b0 * w;
      float* work_b = work + cell_.work_size(b0);
      float* state[kMaxStates];
      const float* now[kMaxStates];
      float* next[kMaxStates];
      for (size_t i = 0; i < count_; ++i) {
        state[i] = states[i] + b0 * cell_.state_units(i);
        now[i] = state[i];
        next[i] = next_all + rows * state_offsets_[i] + b0 * cell_.state_units(i);
      }
      for (int64_t s = 0; s < steps_; ++s) {
        const int64_t t = rnn_.go_backwards() ? steps_ - 1 - s : s;
        for (int64_t b = 0; b < r; ++b)
          std::memcpy(xp_b + b * w, xp + ((b0 + b) * steps_ + t) * w, static_cast<size_t>(w) * sizeof(float));
        // Never false: make_recurrent_plan_step takes only cells with a fast step (and nothing may
        // throw on the threads).
        (void)cell_.fast_step(xp_b, now, next, work_b, r);
        for (size_t i = 0; i < count_; ++i)
          std::memcpy(state[i], next[i], static_cast<size_t>(r * cell_.state_units(i)) * sizeof(float));
        if (rnn_.return_sequences())
          for (int64_t b = 0; b < r; ++b)
            std::memcpy(out + ((b0 + b) * steps_ + s) * units_, next[o] + b * units_,
                        static_cast<size_t>(units_) * sizeof(float));
      }
    });
    if (rnn_.return_sequences()) return;
    if (steps_ == 0)
      std::fill(out, out + rows * units_, 0.f);
    else
      std::memcpy(out, states[o], static_cast<size_t>(rows * units_) * sizeof(float));
  }

  int64_t scratch_floats(int64_t rows) const override { return own_scratch(rows) + rows * state_floats_; }
  const Layer* state_layer() const override { return rnn_.stateful() ? &rnn_ : nullptr; }
  std::vector<int64_t> state_widths() const override {
    std::vector<int64_t> w;
    for (size_t i = 0; i < count_; ++i) w.push_back(cell_.state_units(i));
    return w;
  }

 private:
  // The projections of every step, one step's, the next states and the cell's work.
  int64_t own_scratch(int64_t rows) const {
    return rows * steps_ * width_ + rows * width_ + rows * state_floats_ + cell_.work_size(rows);
  }

  const layers::Rnn& rnn_;  // the model keeps the layer alive
  const layers::RnnCell& cell_;
  int64_t steps_, units_, width_;
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
