// The recurrent cells (keras/src/layers/rnn/{simple_rnn,lstm,gru}.py): SimpleRNNCell, LSTMCell and
// GRUCell (and ConvLSTM's cell, conv_lstm.cpp, whose states keep their spatial shape). A cell holds kernel (features, gates * units), recurrent_kernel (units, gates * units) and
// bias, as Keras creates them; the RNN layer (rnn.h) runs it over time in two parts:
//   project(x)    every step's input product at once, x @ kernel (+ the input bias): one matmul;
//   step(xp, s)   one step from that projection and the states: one recurrent product for all gates.
// Everything is built from ops, so the gradient tape differentiates through time.
#pragma once

#include <string>
#include <vector>

#include "kerascpp/layer.h"
#include "layers/activations/activation_fn.h"

namespace kerascpp::layers {

class RnnCell : public Layer {
 public:
  // config: the cell's keys (units, activation, ..., dropout); gates: 1 (SimpleRNN), 4 (LSTM), 3 (GRU).
  RnnCell(Json given, std::string cls, int gates);
  std::string class_name() const override { return cls_; }
  // The output's size (a stack's: its last cell's).
  int64_t units() const { return units_; }
  // 1 (SimpleRNN), 4 (LSTM), 3 (GRU): the kernel has gates() * units() columns.
  int gates() const { return gates_; }
  // The features of a step's input (the kernel's rows), or -1 (not built, a stack, a convolution).
  int64_t input_features() const;
  virtual size_t state_count() const { return 1; }
  // The size of state i (every state of one cell has the cell's units; a stack's differ per cell).
  virtual int64_t state_units(size_t i) const { return units_; }
  // Which of step()'s new states is the step's output (a stack's: its last cell's first state).
  virtual size_t output_state() const { return 0; }
  // Dropout inside the cell that the RNN layer cannot apply (a stack's cells'): training refuses it.
  virtual bool inner_dropout() const { return false; }
  float dropout() const { return dropout_; }
  float recurrent_dropout() const { return recurrent_dropout_; }

  // The rank of one step's input, batch included: 2, (batch, features); ConvLSTM's rank + 2.
  virtual size_t step_rank() const { return 2; }
  // State i's shape for one step's input of shape `step` (batch first): (batch, units) here, ConvLSTM's
  // (batch, *spatial, filters). A step's output has the shape of state output_state().
  virtual Shape state_shape(size_t i, const Shape& step) const { return {step[0], state_units(i)}; }
  // Whether fast_step applies (the cell has one and its activations are elementwise); otherwise the RNN
  // layer goes straight to the op loop, without projecting the sequence for a loop it cannot run.
  virtual bool has_fast_step() const { return false; }
  // The most states a cell with a fast step has (LSTM's h and c; stacks of cells have no fast step).
  static constexpr size_t kMaxFastStates = 2;

  // x: (batch, steps, features) -> (batch, steps, gates * units); ConvLSTM's (batch, steps, *spatial,
  // channels) -> (batch, steps, *out_spatial, 4 * filters).
  virtual Tensor project(const Tensor& x) const;
  // xp: the step's projection, (batch, gates * units) (ConvLSTM: (batch, *out_spatial, 4 filters));
  // states: state_count() tensors of state_shape();
  // recurrent_mask: recurrent dropout's mask on the first state (undefined for none). The new states;
  // the first is the step's output.
  virtual std::vector<Tensor> step(const Tensor& xp, const std::vector<Tensor>& states,
                                   const Tensor& recurrent_mask) const = 0;

  // Training: the whole loop over time as one taped op, where the cell has one (with elementwise
  // activations, LSTMCell: ops::lstm_sequence, GRUCell with reset_after: ops::gru_sequence; they document
  // the arguments and the packed result); undefined otherwise, and the RNN layer runs step() per step.
  virtual Tensor sequence(const Tensor& xp, const std::vector<Tensor>& states, const Tensor& recurrent_mask,
                          const Tensor& mask, bool go_backwards, bool zero_output_for_mask) const {
    return Tensor();
  }

  // Inference without a tape: the same step on raw buffers, computing what step() computes in the same
  // order with the same kernels (so the same numbers), without a tensor per op. xp: the step's
  // projection (batch, gates * units); states / next: state_count() buffers of (batch, units); work:
  // scratch of work_size(batch) floats. False (doing nothing) where the cell has no such path.
  virtual bool fast_step(const float* xp, const float* const* states, float* const* next,
                         float* work, int64_t batch) const {
    return false;
  }
  int64_t work_size(int64_t batch) const { return (2 * gates_ + 2) * batch * units_; }
  // project() on raw buffers, with the same kernels (so the same numbers): x (rows, features) ->
  // xp (rows, gates * units). False (doing nothing) where the cell has no such path (a stack).
  virtual bool fast_project(const float* x, float* xp, int64_t rows) const;

  // As Keras's cell call: inputs = [x_t, *states] -> [output, *new states].
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override;

 protected:
  void do_build(const std::vector<Shape>& in) override;
  // Columns [gate * units, (gate + 1) * units) of t: (batch, gates * units).
  Tensor gate(const Tensor& t, int g) const;
  // fast_project with this bias (gates * units floats, or null).
  void project_into(const float* x, float* xp, int64_t rows, const float* bias) const;
  // h @ recurrent_kernel, with recurrent dropout's mask applied to h first.
  Tensor recurrent(const Tensor& h, const Tensor& recurrent_mask) const;
  virtual Shape bias_shape() const { return {gates_ * units_}; }
  // LSTM and ConvLSTM with unit_forget_bias (Keras's default): after initialisation the forget gate's
  // bias block [units, 2 units) is one, as Keras's bias initializer makes it.
  void unit_forget_bias();

  std::string cls_;
  int64_t units_;
  int gates_;
  bool use_bias_;
  float dropout_, recurrent_dropout_;
  ActivationFn activation_, recurrent_activation_;
  VariablePtr kernel_, recurrent_kernel_, bias_;
};

// A cell for an RNN layer's config: the keys Keras's SimpleRNN / LSTM / GRU hand their cell, named
// "<layer>/<snake_case(cell class)>" so that its variables' paths are Keras's ("lstm/lstm_cell/kernel").
// `name`, when given, is the cell's full name instead.
std::shared_ptr<RnnCell> make_rnn_cell(const std::string& cell_class, const Json& layer_config,
                                       const std::string& name = "");

// keras.layers.StackedRNNCells: cells run one after the other within each step, each on the previous
// one's output; its states are every cell's, in order. `cells`: the serialized cells ({"class_name":
// "LSTMCell", "config": {...}}); `name`: the stack's variable prefix ("rnn/stacked_rnn_cells").
std::shared_ptr<RnnCell> make_stacked_rnn_cells(const Json& cells, const std::string& name);

}  // namespace kerascpp::layers
