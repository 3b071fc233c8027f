// The hook through which ops tell an active gradient tape what they computed (the tape itself is
// kerascpp::GradientTape, include/kerascpp/autodiff.h and src/autodiff/gradient_tape.cpp, one level up).
//
// A tape is per thread and scoped: while one is active on this thread, every op whose inputs the
// tape tracks records (inputs, output, backward). With no tape active (inference), an op pays one
// thread-local load and nothing else: the closure is never built.
//
//   Tensor y = ...forward...;
//   if (Recorder* r = tape_for({x, w}))
//     r->record("matmul", {x, w}, y, [x, w](const Tensor& dy) { return Grads{...}; });
#pragma once

#include <functional>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::ops {

// One gradient per input of the op, in order; an undefined Tensor where the input gets none
// (an integer input, a constant).
using Grads = std::vector<Tensor>;
// Given d(target)/d(output), the gradients for the op's inputs. Called with recording paused.
using Backward = std::function<Grads(const Tensor& dy)>;

class Recorder {
 public:
  virtual ~Recorder() = default;
  // True when t is on the tape: an output of a recorded op or a watched tensor / variable.
  virtual bool tracks(const Tensor& t) const = 0;
  virtual void record(std::string_view op, const std::vector<Tensor>& inputs, const Tensor& output,
                      Backward backward) = 0;
};

// This thread's active recorder, or nullptr.
Recorder* active_recorder();
// Makes r this thread's recorder and returns the previous one (the tape restores it when it ends).
Recorder* set_active_recorder(Recorder* r);

// The active recorder when it tracks at least one of `inputs`, else nullptr: an op records only
// then, so constants (a loss's epsilon, a mask) cost nothing.
Recorder* tape_for(std::initializer_list<const Tensor*> inputs);
Recorder* tape_for(const std::vector<Tensor>& inputs);

// Pauses recording on this thread while alive (backward passes, optimizer updates, metrics).
class NoRecord {
 public:
  NoRecord() : previous_(set_active_recorder(nullptr)) {}
  ~NoRecord() { set_active_recorder(previous_); }
  NoRecord(const NoRecord&) = delete;
  NoRecord& operator=(const NoRecord&) = delete;

 private:
  Recorder* previous_;
};

}  // namespace kerascpp::ops
