// Reverse-mode automatic differentiation: GradientTape, as tf.GradientTape, and a finite-difference
// gradient checker usable on any op, layer or model.
//
// A tape records, while it is alive, every op run on its thread whose inputs it tracks (a watched
// tensor or variable, or the output of an op it recorded). Nothing is global: the tape is a local
// value, and all it recorded (activations kept for the backward pass included) is freed when it
// goes out of scope, so a training step leaves nothing behind.
//
//   GradientTape tape;
//   tape.watch(dense_kernel);                       // a VariablePtr
//   Tensor loss = ops::sum(ops::unary(ops::UnaryOp::square, model(x)[0]), 0);
//   std::vector<Tensor> g = tape.gradient(loss, {dense_kernel});
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/tensor.h"
#include "kerascpp/variable.h"

namespace kerascpp {

class GradientTape {
 public:
  // Becomes this thread's active tape; the previous one (if any) is restored when this one ends.
  // A persistent tape (the default) answers gradient() any number of times and keeps what it recorded
  // until it goes; a tape made with persistent = false (tf.GradientTape's default, and fit's) answers
  // once and frees each op's activations and gradients as the backward pass leaves them behind, so
  // that a training step's peak memory is about its activations, not activations plus gradients.
  GradientTape();
  explicit GradientTape(bool persistent);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Tracks t (or the variable's storage: every value() view of it) as a source.
  void watch(const Tensor& t);
  void watch(const VariablePtr& v);
  void watch(const std::vector<VariablePtr>& vs);
  // Stops recording (the recorded ops stay); gradient() may still be called.
  void stop_recording();

  // d(sum of target * output_gradient)/d(source) for each source; output_gradient defaults to ones
  // (so a scalar target gives its plain gradient). A source the target does not depend on gets an
  // undefined Tensor, as Keras returns None. ValueError when target is not on the tape, or on a second
  // call to a tape that is not persistent.
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& sources,
                               const Tensor& output_gradient = Tensor()) const;
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<VariablePtr>& sources,
                               const Tensor& output_gradient = Tensor()) const;

  // Number of ops recorded so far (tests check that a step's tape is the size of one step).
  size_t size() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Finite-difference check of the gradients of f at `inputs` (float32): f's output is reduced
// against a fixed random projection, each input element is moved by +-epsilon (central
// differences, computed in double from float32 evaluations), and the result is compared with the
// tape's gradient. Returns the worst relative error |analytic - numeric| / max(|analytic|, |numeric|,
// floor) over all elements, where the floor is 100x the float32 rounding noise of the differences
// (8 ulps of sum|f(x) * projection|, over the step): a gradient of the wrong sign scores 2 unless it
// is below that floor, which rounding noise would hide anyway.
struct GradientCheck {
  double max_error = 0;
  std::string worst;  // "input 1 element 7: analytic 0.25 numeric 0.2501"
};
GradientCheck check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& inputs, double epsilon = 1e-3);

}  // namespace kerascpp
