// The recurrent layers SimpleRNN, LSTM, GRU, RNN(cell) and ConvLSTM1D-3D (keras/src/layers/rnn/rnn.py
// and its TensorFlow backend's rnn loop): a cell run over the time axis.
//   (batch, steps, features) -> (batch, units), or (batch, steps, units) with return_sequences,
//   followed by the final states with return_state (LSTM: h, c); ConvLSTM's steps and states keep
//   their spatial axes (RnnCell::state_shape). Training runs LSTM and GRU as one op per sequence
//   (RnnCell::sequence), the others step by step.
// Masks (from Embedding(mask_zero) or Masking): a masked step keeps the states and repeats the previous
// output (zeros with zero_output_for_mask); the output keeps the mask with return_sequences. Which mask
// a call with initial_state tensors gets follows the file's Keras (models/functional.h). go_backwards runs from the last
// step and returns the outputs in that order. dropout / recurrent_dropout act in training, with one mask
// per sequence. The cell may be a StackedRNNCells (states: every cell's, in order). stateful=True
// layers start from and keep their states in the caller's RnnStates (layer.h). Refused by name:
// time_major=True.
#pragma once

#include "layers/rnn/rnn_cell.h"

namespace kerascpp::layers {

// Step t of sequences (batch, steps, ...): (batch, ...), through ops (the tape sees it).
Tensor time_step(const Tensor& sequences, int64_t t);

class Rnn : public Layer {
 public:
  Rnn(Json given, std::string cls, std::shared_ptr<RnnCell> cell);
  std::string class_name() const override { return cls_; }
  bool supports_masking() const override { return true; }
  std::vector<TensorArgument> tensor_arguments() const override { return {{"sequences"}, {"initial_state"}}; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override;
  // The same with the mask given (Bidirectional hands its mask to both directions, initial_state or not).
  // final_states: set to the states after the last step (stateful layers keep them).
  std::vector<Tensor> run(const std::vector<Tensor>& in, const Tensor& mask, const CallContext& ctx,
                          std::vector<Tensor>* final_states = nullptr) const;
  bool stateful() const { return stateful_; }
  const RnnCell& cell() const { return *cell_; }
  // Read from Keras 2's CuDNNLSTM / CuDNNGRU (config "kerascpp_cudnn", io/config_dialect.cpp): the file's
  // cuDNN layout converted as Keras's own loader converts it (per gate, the input kernel in cuDNN's
  // order, the recurrent kernel transposed; CuDNNLSTM's two biases summed, CuDNNGRU's stacked).
  std::vector<Tensor> from_legacy_layout(std::vector<Tensor> saved) const override;
  bool return_sequences() const { return return_sequences_; }
  bool return_state() const { return return_state_; }
  bool go_backwards() const { return go_backwards_; }
  std::vector<Tensor> compute_mask(const std::vector<Tensor>& in, const std::vector<Tensor>& masks) const override;
  std::vector<Layer*> sublayers() const override { return {cell_.get()}; }

  // Inference without a tape over raw buffers: the cell's fast_step step by step, the batch's blocks of
  // rows on the threads. run() takes it (run_fast) and so do the inference plan's recurrent steps
  // (models/plan_recurrent_steps.cpp): one loop, so both give each row the same bits.
  struct FastLoop {
    // (rows, steps, width): every step's input product (RnnCell::fast_project).
    const float* xp = nullptr;
    // cell().state_count() blocks (rows, state_units(i)): the initial states, left holding the final ones.
    float* const* states = nullptr;
    // (rows, steps) or null: where 0, a row's step keeps its states and repeats its last output (zeros
    // with zero_output_for_mask).
    const float* mask = nullptr;
    // (rows, steps, units): the outputs in the order run (return_sequences), or null.
    float* sequence = nullptr;
    // (rows, units): the last output (zeros for no steps), or null; needed with a mask.
    float* last = nullptr;
    // fast_loop_floats(rows, width) floats.
    float* scratch = nullptr;
  };

  int64_t fast_loop_floats(int64_t rows, int64_t width) const;
  // False where the cell's fast step declines (has_fast_step() false): the states may be part written.
  bool fast_loop(const FastLoop& f, int64_t rows, int64_t steps, int64_t width) const;
  // Keras 3 saves the cell's variables under the attribute "cell" (".../lstm/cell/vars").
  std::vector<SaveableChildren> saveable_children() const override { return {{"cell", {cell_.get()}, false}}; }

 protected:
  void do_build(const std::vector<Shape>& in) override;

 private:
  std::vector<Tensor> unpack_sequence(const Tensor& packed, std::vector<Tensor>* final_states) const;
  std::vector<Tensor> run_fast(const Tensor& x, const std::vector<Tensor>& initial, const Tensor& mask,
                               std::vector<Tensor>* final_states) const;
  std::string cls_;
  std::string cudnn_;  // "CuDNNLSTM" / "CuDNNGRU" when read from one
  std::shared_ptr<RnnCell> cell_;
  bool return_sequences_, return_state_, go_backwards_, zero_output_for_mask_;
  bool stateful_;
};

}  // namespace kerascpp::layers
