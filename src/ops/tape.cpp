#include "ops/tape.h"

namespace kerascpp::ops {
namespace {
thread_local Recorder* current = nullptr;
}  // namespace

Recorder* active_recorder() { return current; }

Recorder* set_active_recorder(Recorder* r) {
  Recorder* previous = current;
  current = r;
  return previous;
}

Recorder* tape_for(std::initializer_list<const Tensor*> inputs) {
  if (!current) return nullptr;
  for (const Tensor* t : inputs)
    if (t->defined() && current->tracks(*t)) return current;
  return nullptr;
}

Recorder* tape_for(const std::vector<Tensor>& inputs) {
  if (!current) return nullptr;
  for (const Tensor& t : inputs)
    if (t.defined() && current->tracks(t)) return current;
  return nullptr;
}

}  // namespace kerascpp::ops
