#include "layers/rnn/rnn.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <random>

#include "kernels/recurrent.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::layers {
namespace {

using ops::BinaryOp;

Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::multiply, a, b); }

Shape without_time(Shape sequences) {
  sequences.erase(sequences.begin() + 1);
  return sequences;
}

// Keras's dropout mask: 1 / (1 - rate) with probability 1 - rate, else 0.
Tensor dropout_mask(const Shape& shape, float rate, std::mt19937_64& rng) {
  std::bernoulli_distribution keep(1.0 - rate);
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = keep(rng) ? 1.f / (1.f - rate) : 0.f;
  return t;
}

}  // namespace

Tensor time_step(const Tensor& sequences, int64_t t) {
  std::vector<int64_t> begin(sequences.rank(), 0), size = sequences.shape();
  begin[1] = t;
  size[1] = 1;
  return ops::slice(sequences, begin, size).reshape(without_time(sequences.shape()));
}

Rnn::Rnn(Json given, std::string cls, std::shared_ptr<RnnCell> cell)
    : Layer(std::move(given)),
      cls_(std::move(cls)),
      cell_(std::move(cell)),
      return_sequences_(get<bool>(config(), "return_sequences", false)),
      return_state_(get<bool>(config(), "return_state", false)),
      go_backwards_(get<bool>(config(), "go_backwards", false)),
      zero_output_for_mask_(get<bool>(config(), "zero_output_for_mask", false)),
      stateful_(get<bool>(config(), "stateful", false)) {
  cudnn_ = config().value("kerascpp_cudnn", std::string());
  config_.erase("kerascpp_cudnn");
  KCPP_CHECK(!get<bool>(config(), "time_major", false), NotImplementedError, "Layer '", name(), "' (", cls_,
             ") uses time_major=True (tf_keras), which kerascpp does not support");
}

std::vector<Shape> Rnn::compute_output_shape(const std::vector<Shape>& in) const {
  const size_t rank = cell_->step_rank() + 1;
  KCPP_CHECK(!in.empty() && in[0].size() == rank, ValueError, "Input 0 of layer '", name(), "' (", cls_,
             ") is incompatible with the layer: expected ndim=", rank, ", found ndim=", in.empty() ? 0 : in[0].size(),
             ". Full shape received: ", in.empty() ? std::string("()") : shape_str(in[0]));
  const size_t n = cell_->state_count();
  KCPP_CHECK(in.size() == 1 || in.size() == 1 + n, ValueError, "Layer '", name(), "' (", cls_, ") expects ", n,
             " initial state(s). Received: ", in.size() - 1);
  const Shape step = without_time(in[0]);
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape want = cell_->state_shape(i - 1, step);
    bool ok = in[i].size() == want.size();
    for (size_t d = 0; ok && d < want.size(); ++d) ok = in[i][d] == want[d] || in[i][d] < 0 || want[d] < 0;
    KCPP_CHECK(ok, ValueError, "Initial state ", i - 1, " of layer '", name(), "' (", cls_, ") must have shape ",
               shape_str(want), ". Received: ", shape_str(in[i]));
  }
  Shape y = cell_->state_shape(cell_->output_state(), step);
  if (return_sequences_) y.insert(y.begin() + 1, in[0][1]);
  std::vector<Shape> out{y};
  if (return_state_)
    for (size_t i = 0; i < n; ++i) out.push_back(cell_->state_shape(i, step));
  return out;
}

void Rnn::do_build(const std::vector<Shape>& in) {
  KCPP_CHECK(!stateful_ || in[0][0] > 0, ValueError, "Layer '", name(), "' (", cls_, ") is stateful, which needs a "
             "fixed batch size: give the model's input a batch_shape (keras.Input(batch_shape=...)). Received: "
             "input_shape=", shape_str(in[0]));
  cell_->build({without_time(in[0])});
}

std::vector<Tensor> Rnn::compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>& masks) const {
  std::vector<Tensor> out{return_sequences_ && !masks.empty() ? masks[0] : Tensor()};
  if (return_state_) out.resize(1 + cell_->state_count());
  return out;
}

std::vector<Tensor> Rnn::call(const std::vector<Tensor>& in, const CallContext& ctx) const {
  // The graph gives the mask by the file's rules (Keras 3: none with initial_state tensors, unless
  // recorded; tf_keras: the sequences' mask).
  if (!stateful_) return run(in, ctx.mask(0), ctx);
  KCPP_CHECK(ctx.rnn_states != nullptr, ValueError, "Layer '", name(), "' (", cls_, ") is stateful: call the model with "
             "the caller's states (C++: model(x, states) or model.call_into(x, y, &states) with a kerascpp::RnnStates; "
             "Python keeps them per model)");
  std::vector<Tensor> inputs = in;
  const std::vector<Tensor>& kept = ctx.rnn_states->of(this);
  if (inputs.size() == 1 && !kept.empty()) {  // given initial_state tensors win, as in Keras
    KCPP_CHECK(kept[0].dim(0) == in[0].dim(0), ValueError, "Layer '", name(), "' (", cls_, ") is stateful with states "
               "for a batch of ", kept[0].dim(0), ", but it received a batch of ", in[0].dim(0),
               ": call reset_states() before changing the batch size");
    inputs.insert(inputs.end(), kept.begin(), kept.end());
  }
  std::vector<Tensor> final_states;
  std::vector<Tensor> out = run(inputs, ctx.mask(0), ctx, &final_states);
  // Kept as values: the next batch starts from them, without a gradient back into this one (Keras
  // assigns them to the layer's state variables).
  if (ops::active_recorder() != nullptr)
    for (Tensor& s : final_states) s = s.copy();
  ctx.rnn_states->store(this, std::move(final_states));
  return out;
}

std::vector<Tensor> Rnn::run(const std::vector<Tensor>& in, const Tensor& given_mask, const CallContext& ctx,
                             std::vector<Tensor>* final_states) const {
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  compute_output_shape(shapes);
  const Tensor& x = in[0];
  // Both loops read rows of the kernel's width (fast_project reads them unchecked).
  const int64_t features = cell_->input_features();
  KCPP_CHECK(features < 0 || x.dim(-1) == features, ValueError, "Input 0 of layer '", name(),
             "' is incompatible with the layer: expected axis -1 of input shape to have value ", features,
             ", but received input with shape ", shape_str(x.shape()));
  const int64_t batch = x.dim(0), steps = x.dim(1);
  const Shape step = without_time(x.shape());
  std::vector<Tensor> states(in.begin() + 1, in.end());
  if (states.empty())
    for (size_t i = 0; i < cell_->state_count(); ++i) states.push_back(Tensor::zeros(cell_->state_shape(i, step)));
  // Both loops keep a step where the mask is nonzero; only other dtypes need converting (graph masks
  // are float32 already).
  const Tensor mask =
      given_mask.defined() && given_mask.dtype() != DType::float32 ? ops::as_mask(given_mask) : given_mask;
  KCPP_CHECK(!mask.defined() || mask.shape() == Shape({batch, steps}), ValueError, "Layer '", name(), "' (", cls_,
             ") received a mask of shape ", shape_str(mask.defined() ? mask.shape() : Shape{}),
             " for sequences of shape ", shape_str(x.shape()), "; expected (", batch, ", ", steps, ")");

  if (!ctx.training && ops::active_recorder() == nullptr && cell_->has_fast_step()) {
    std::vector<Tensor> fast = run_fast(x, states, mask, final_states);
    if (!fast.empty()) return fast;
  }
  KCPP_CHECK(!ctx.training || !cell_->inner_dropout(), NotImplementedError, "Layer '", name(), "' (", cls_,
             "): training a stack of cells with dropout or recurrent_dropout is not supported");
  Tensor xin = x, recurrent_mask;
  if (ctx.training && (cell_->dropout() > 0.f || cell_->recurrent_dropout() > 0.f)) {
    std::mt19937_64 rng = layer_rng(ctx, name());
    Shape one_step = x.shape();  // one mask per sequence, the same at every step
    one_step[1] = 1;
    if (cell_->dropout() > 0.f) xin = mul(x, dropout_mask(one_step, cell_->dropout(), rng));
    if (cell_->recurrent_dropout() > 0.f)
      recurrent_mask = dropout_mask(cell_->state_shape(0, step), cell_->recurrent_dropout(), rng);
  }
  const Tensor xp = cell_->project(xin);  // every step's input product in one matmul (or convolution)
  if (steps > 0) {
    const Tensor packed = cell_->sequence(xp, states, recurrent_mask, mask, go_backwards_, zero_output_for_mask_);
    if (packed.defined()) return unpack_sequence(packed, final_states);
  }
  const Shape output_shape = cell_->state_shape(cell_->output_state(), step);
  Tensor output = Tensor::zeros(output_shape);
  std::vector<Tensor> outputs;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = go_backwards_ ? steps - 1 - s : s;
    std::vector<Tensor> next = cell_->step(time_step(xp, t), states, recurrent_mask);
    Tensor out = next[cell_->output_state()];
    if (mask.defined()) {  // a masked step keeps the states and repeats the output (or gives zeros)
      Shape per_sample(out.rank(), 1);  // (batch, 1, ...): broadcast over each sample's values
      per_sample[0] = batch;
      const Tensor m = ops::slice(mask, {0, t}, {batch, 1}).reshape(per_sample);
      for (size_t i = 0; i < next.size(); ++i) next[i] = ops::where(m, next[i], states[i]);
      out = ops::where(m, out, zero_output_for_mask_ ? Tensor::zeros(out.shape()) : output);
    }
    states = std::move(next);
    output = out;
    if (return_sequences_) {
      Shape one_step = out.shape();  // (batch, 1, ...)
      one_step.insert(one_step.begin() + 1, 1);
      outputs.push_back(out.reshape(one_step));
    }
  }
  std::vector<Tensor> result;
  if (!return_sequences_) {
    result.push_back(output);
  } else if (steps > 0) {
    result.push_back(ops::concatenate(outputs, 1));
  } else {
    Shape empty = output_shape;
    empty.insert(empty.begin() + 1, 0);
    result.push_back(Tensor::zeros(empty));
  }
  if (return_state_) result.insert(result.end(), states.begin(), states.end());
  if (final_states) *final_states = states;
  return result;
}

// The outputs from a cell's sequence() (batch, steps, (1 + states) units): [y_s | h_s (| c_s)] per step.
std::vector<Tensor> Rnn::unpack_sequence(const Tensor& packed, std::vector<Tensor>* final_states) const {
  const int64_t batch = packed.dim(0), steps = packed.dim(1), width = packed.dim(2);
  const int64_t units = width / static_cast<int64_t>(1 + cell_->state_count());
  const Tensor last = ops::slice(packed, {0, steps - 1, 0}, {batch, 1, width}).reshape({batch, width});
  std::vector<Tensor> states;
  for (int64_t i = 1; i * units < width; ++i) states.push_back(ops::slice(last, {0, i * units}, {batch, units}));
  std::vector<Tensor> result{return_sequences_ ? ops::slice(packed, {0, 0, 0}, {batch, steps, units})
                                               : ops::slice(last, {0, 0}, {batch, units})};
  if (return_state_) result.insert(result.end(), states.begin(), states.end());
  if (final_states) *final_states = states;
  return result;
}

std::vector<Tensor> Rnn::from_legacy_layout(std::vector<Tensor> saved) const {
  if (cudnn_.empty()) return saved;
  const int64_t units = cell_->units(), gates = cudnn_ == "CuDNNLSTM" ? 4 : 3;
  const Shape bias = {2 * gates * units};
  KCPP_CHECK(saved.size() == 3 && saved[0].rank() == 2 && saved[0].dim(1) == gates * units &&
                 saved[1].shape() == Shape({units, gates * units}) && saved[2].shape() == bias,
             ValueError, "Layer '", name(), "' (", cudnn_, " read as ", cls_, ") expects a kernel (features, ", gates * units,
             "), a recurrent kernel (", units, ", ", gates * units, ") and a bias (", bias[0], ") in the file");
  const int64_t d = saved[0].dim(0);
  Tensor kernel = Tensor::empty(saved[0].shape()), recurrent = Tensor::empty(saved[1].shape());
  const float* k = saved[0].data<float>();
  const float* r = saved[1].data<float>();
  for (int64_t g = 0; g < gates; ++g) {
    // Gate block k_g (d, units): Keras's k_g.T.reshape((d, units), order="F"), i.e. the block's bytes
    // read as cuDNN's (units, d) matrix, transposed.
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < units; ++j) {
        const int64_t flat = j * d + i;  // element (j, i) of the (units, d) reading
        kernel.data<float>()[i * gates * units + g * units + j] = k[(flat / units) * gates * units + g * units + flat % units];
      }
    for (int64_t i = 0; i < units; ++i)
      for (int64_t j = 0; j < units; ++j)
        recurrent.data<float>()[i * gates * units + g * units + j] = r[j * gates * units + g * units + i];
  }
  Tensor b;
  if (gates == 4) {  // CuDNNLSTM: input and recurrent biases summed
    b = Tensor::empty({4 * units});
    for (int64_t i = 0; i < 4 * units; ++i) b.data<float>()[i] = saved[2].data<float>()[i] + saved[2].data<float>()[4 * units + i];
  } else {  // CuDNNGRU: GRU(reset_after=True)'s (2, 3 units)
    b = saved[2].reshape({2, 3 * units});
  }
  return {kernel, recurrent, b};
}

// Inference without a tape: the loop of run() on raw buffers (Rnn::fast_loop), with no tensor per step.
// Empty when the cell has no fast step; `initial` is never written, so the op loop can start from it.
std::vector<Tensor> Rnn::run_fast(const Tensor& x, const std::vector<Tensor>& initial, const Tensor& mask,
                                  std::vector<Tensor>* final_states) const {
  const int64_t batch = x.dim(0), steps = x.dim(1);
  // Every step's input product, as project() computes it but with the bias added in the product's own
  // memory (fast_project, the plan's kernel: the same bits).
  Tensor xp = Tensor::empty({batch, steps, cell_->gates() * cell_->units()});
  if (x.dtype() != DType::float32 || !cell_->fast_project(x.data<float>(), xp.data<float>(), batch * steps))
    xp = cell_->project(x);
  const int64_t width = xp.dim(2);
  const size_t count = cell_->state_count();
  KCPP_ASSERT(count <= RnnCell::kMaxFastStates);
  std::vector<Tensor> states;
  float* state_data[RnnCell::kMaxFastStates];
  for (size_t i = 0; i < count; ++i) {
    states.push_back(initial[i].copy());
    state_data[i] = states.back().data<float>();
  }
  // The last output: the result, or (sequences with a mask) what a masked step repeats.
  Tensor output = !return_sequences_ || mask.defined() ? Tensor::empty({batch, cell_->units()}) : Tensor();
  Tensor sequence = return_sequences_ ? Tensor::empty({batch, steps, cell_->units()}) : Tensor();
  const Tensor scratch = Tensor::empty({fast_loop_floats(batch, width)});
  FastLoop f;
  f.xp = xp.data<float>();
  f.states = state_data;
  f.mask = mask.defined() ? mask.data<float>() : nullptr;
  f.sequence = return_sequences_ ? sequence.data<float>() : nullptr;
  f.last = output.defined() ? output.data<float>() : nullptr;
  f.scratch = scratch.data<float>();
  if (!fast_loop(f, batch, steps, width)) return {};
  std::vector<Tensor> result{return_sequences_ ? sequence : output};
  if (return_state_) result.insert(result.end(), states.begin(), states.end());
  if (final_states) *final_states = states;
  return result;
}

// The scratch: one step's rows of xp, the next states (state by state, rows x state_units each) and
// the cell's work, all linear in rows so that a block of rows takes its own part of each.
int64_t Rnn::fast_loop_floats(int64_t rows, int64_t width) const {
  int64_t state_floats = 0;
  for (size_t i = 0; i < cell_->state_count(); ++i) state_floats += cell_->state_units(i);
  return rows * width + rows * state_floats + cell_->work_size(rows);
}

// The batch's rows are independent through time: blocks of them run the whole sequence on the threads
// (kernels::for_row_blocks, as the taped sequence ops do), each row with the bits the whole batch's step
// gives it. Nothing here allocates or throws on the threads; a cell whose fast step declines stops every
// block (the caller then runs the op loop).
bool Rnn::fast_loop(const FastLoop& f, int64_t rows, int64_t steps, int64_t width) const {
  const RnnCell& cell = *cell_;
  const size_t count = cell.state_count(), o = cell.output_state();
  const int64_t units = cell.units();
  KCPP_ASSERT(count <= RnnCell::kMaxFastStates && (f.last || !f.mask));
  // The buffers as locals: the compiler need not read them again after each call that might write.
  const float* const xp = f.xp;
  const float* const mask = f.mask;
  float* const sequence = f.sequence;
  int64_t state_units[RnnCell::kMaxFastStates], next_offset[RnnCell::kMaxFastStates], state_floats = 0;
  for (size_t i = 0; i < count; ++i) {
    state_units[i] = cell.state_units(i);
    next_offset[i] = rows * state_floats;
    state_floats += state_units[i];
  }
  float* xp_t = f.scratch;
  float* next_all = xp_t + rows * width;
  float* work = next_all + rows * state_floats;
  // What a masked first step repeats, or the output of no steps (unmasked, it is copied in at the end).
  if (f.last && (mask || steps == 0)) std::fill(f.last, f.last + rows * units, 0.f);
  const auto bytes = [](int64_t floats) { return static_cast<size_t>(floats) * sizeof(float); };
  std::atomic<bool> failed{false};
  kernels::for_row_blocks(rows, units, width, [&](int64_t b0, int64_t r) {
    float* state[RnnCell::kMaxFastStates];
    const float* now[RnnCell::kMaxFastStates];
    float* next[RnnCell::kMaxFastStates];
    for (size_t i = 0; i < count; ++i) {
      state[i] = f.states[i] + b0 * state_units[i];
      now[i] = state[i];
      next[i] = next_all + next_offset[i] + b0 * state_units[i];
    }
    float* xp_b = xp_t + b0 * width;
    float* work_b = work + cell.work_size(b0);
    float* last = f.last ? f.last + b0 * units : nullptr;
    for (int64_t s = 0; s < steps && !failed.load(std::memory_order_relaxed); ++s) {
      const int64_t t = go_backwards_ ? steps - 1 - s : s;
      for (int64_t b = 0; b < r; ++b)
        std::memcpy(xp_b + b * width, xp + ((b0 + b) * steps + t) * width, bytes(width));
      if (!cell.fast_step(xp_b, now, next, work_b, r)) {
        failed = true;
        return;
      }
      if (!mask) {
        for (size_t i = 0; i < count; ++i) std::memcpy(state[i], next[i], bytes(r * state_units[i]));
        if (sequence)
          for (int64_t b = 0; b < r; ++b)
            std::memcpy(sequence + ((b0 + b) * steps + s) * units, next[o] + b * units, bytes(units));
        continue;
      }
      for (int64_t b = 0; b < r; ++b) {
        if (mask[(b0 + b) * steps + t] != 0.f) {
          for (size_t i = 0; i < count; ++i) {
            const int64_t su = state_units[i];
            std::memcpy(state[i] + b * su, next[i] + b * su, bytes(su));
          }
          std::memcpy(last + b * units, next[o] + b * units, bytes(units));
        } else if (zero_output_for_mask_) {
          std::fill(last + b * units, last + (b + 1) * units, 0.f);
        }  // else a masked step repeats the row's last output
        if (sequence) std::memcpy(sequence + ((b0 + b) * steps + s) * units, last + b * units, bytes(units));
      }
    }
  });
  if (failed) return false;
  if (f.last && !mask && steps > 0) std::memcpy(f.last, f.states[o], bytes(rows * units));
  return true;
}

// keras.layers.RNN over one cell given by its config ({"class_name": "LSTMCell", "config": {...}}).
LayerPtr make_rnn(Json c) {
  const std::string who = "Layer '" + c.value("name", std::string()) + "' (RNN)";
  const Json spec = c.contains("cell") ? c["cell"] : Json();
  if (spec.is_array()) return std::make_shared<Rnn>(c, "RNN", make_stacked_rnn_cells(spec, c.value("name", std::string())));
  if (spec.is_object() && spec.value("class_name", Json()) == "StackedRNNCells") {
    const Json& sc = spec.value("config", Json::object());
    const std::string stack = sc.value("name", std::string("stacked_rnn_cells"));
    return std::make_shared<Rnn>(c, "RNN", make_stacked_rnn_cells(sc.value("cells", Json()), c.value("name", std::string()) + "/" + stack));
  }
  KCPP_CHECK(spec.is_object() && spec.value("class_name", Json()).is_string() && spec.contains("config") && spec.value("config", Json()).is_object(),
             ValueError, who, ": `cell` must be a serialized cell. Received: ", spec.dump().substr(0, 200));
  const std::string cls = spec["class_name"].get<std::string>();
  KCPP_CHECK(cls == "SimpleRNNCell" || cls == "LSTMCell" || cls == "GRUCell", NotImplementedError, who, " runs a ", cls,
             " cell; kerascpp runs SimpleRNNCell, LSTMCell and GRUCell");
  Json cell = spec["config"];
  cell["name"] = c.value("name", std::string());  // the cell is then named "<rnn>/<snake_case(cell)>"
  return std::make_shared<Rnn>(std::move(c), "RNN", make_rnn_cell(cls, cell));
}

LayerPtr make_simple_rnn(Json c) {
  auto cell = make_rnn_cell("SimpleRNNCell", c);
  return std::make_shared<Rnn>(std::move(c), "SimpleRNN", std::move(cell));
}
LayerPtr make_lstm(Json c) {
  auto cell = make_rnn_cell("LSTMCell", c);
  return std::make_shared<Rnn>(std::move(c), "LSTM", std::move(cell));
}
LayerPtr make_gru(Json c) {
  auto cell = make_rnn_cell("GRUCell", c);
  return std::make_shared<Rnn>(std::move(c), "GRU", std::move(cell));
}

}  // namespace kerascpp::layers
