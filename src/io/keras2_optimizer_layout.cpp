#include "io/keras2_optimizer_layout.h"

#include <algorithm>
#include <map>
#include <utility>

#include "kerascpp/variable.h"

namespace kerascpp::io {
namespace {

struct SlotName {
  const char* keras2;    // OptimizerV2's slot name ("m")
  const char* kerascpp;  // the slot kerascpp (Keras 3) keeps ("momentum")
};

// Each class's slot blocks in the order Keras 2 lists them (OptimizerV2._create_slots, and Keras 2.3's
// self.weights = [self.iterations] + ms + vs + vhats).
const std::map<std::string, std::vector<SlotName>>& slot_blocks() {
  static const std::map<std::string, std::vector<SlotName>> blocks = {
      {"SGD", {{"momentum", "momentum"}}},
      {"Adam", {{"m", "momentum"}, {"v", "velocity"}, {"vhat", "velocity_hat"}}},
      {"RMSprop", {{"rms", "velocity"}, {"momentum", "momentum"}, {"mg", "average_gradient"}}},
      {"Adagrad", {{"accumulator", "accumulator"}}},
      {"Adadelta", {{"accum_grad", "accumulated_grad"}, {"accum_var", "accumulated_delta_var"}}},
      {"Adamax", {{"m", "momentum"}, {"v", "norm"}}},
      {"Ftrl", {{"accumulator", "accumulator"}, {"linear", "linear"}}},  // OptimizerV2 only, each variable's two together
  };
  return blocks;
}

std::string last_component(const std::string& name) {
  const size_t slash = name.rfind('/');
  std::string last = slash == std::string::npos ? name : name.substr(slash + 1);
  if (last.ends_with(":0")) last.resize(last.size() - 2);
  return last;
}

// OptimizerV2 names its iteration counter "<Optimizer>/iter:0"; Keras 2.0-2.3 "<Optimizer>/iterations:0"
// and its slots "training/<Optimizer>/Variable_<i>:0" (or "m_<i>:0").
bool is_v2(const std::vector<std::string>& names) { return names[0].ends_with("/iter:0"); }

// A Keras 2.0-2.3 slot: created under the "training" name scope, unnamed ("Variable_3") before 2.3.
bool is_keras2_slot(const std::string& name) {
  const std::string last = last_component(name);
  return name.ends_with(":0") && (name.starts_with("training/") || last == "Variable" || last.starts_with("Variable_"));
}

// "Adam/dense/kernel/m:0" -> "dense/kernel".
std::string v2_variable(const std::string& name) {
  const size_t first = name.find('/'), last = name.rfind('/');
  return first == last ? std::string() : name.substr(first + 1, last - first - 1);
}

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

struct Block {
  std::string keras2;        // the slot kind as Keras 2 names it
  std::vector<size_t> rows;  // the file entries, one per trainable variable
};

}  // namespace

bool is_keras2_slot_major(const std::vector<std::string>& names) {
  if (names.empty()) return false;
  if (is_v2(names) || names[0].ends_with("/iterations:0")) return true;
  for (const std::string& n : names)
    if (!is_keras2_slot(n)) return false;
  return true;  // Keras 2.2.4 without an iteration counter
}

std::variant<OptimizerAssignment, std::string> pair_keras2_slot_major(const optimizers::Optimizer& optimizer,
                                                                      const std::vector<VariablePtr>& trainable,
                                                                      const std::vector<std::string>& names,
                                                                      const std::vector<Tensor>& values) {
  const std::string cls = optimizer.class_name();
  const auto known = slot_blocks().find(cls);
  if (known == slot_blocks().end())
    return "kerascpp does not map the Keras 2 layout of " + cls + "'s weights (" + names[0] + ", ...)";
  const std::vector<SlotName>& kinds = known->second;
  OptimizerAssignment out;
  size_t first = 0;
  if (!values.empty() && values[0].shape().empty() && !is_keras2_slot(names[0])) {
    out.values.emplace_back(optimizer.variables()[0], values[0].astype(DType::int64));
    first = 1;
  }
  const size_t n = trainable.size();
  std::vector<Block> blocks;
  if (is_v2(names)) {
    for (size_t i = first; i < names.size(); ++i) {
      const std::string kind = last_component(names[i]);
      auto b = std::find_if(blocks.begin(), blocks.end(), [&](const Block& x) { return x.keras2 == kind; });
      if (b == blocks.end()) b = blocks.insert(blocks.end(), Block{kind, {}});
      b->rows.push_back(i);
    }
  } else {
    const size_t rest = values.size() - first;
    if (n == 0 || rest % n != 0 || rest / n > kinds.size())
      return "its " + std::to_string(rest) + " slot weights do not make whole blocks of one per trainable weight (" +
             std::to_string(n) + ") of " + cls + "'s slots";
    for (size_t k = 0; k < rest / n; ++k) {
      blocks.push_back(Block{kinds[k].keras2, {}});
      for (size_t i = 0; i < n; ++i) blocks.back().rows.push_back(first + k * n + i);
    }
  }
  size_t slots_filled = 0;
  for (const Block& b : blocks) {
    auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const SlotName& s) { return s.keras2 == b.keras2; });
    if (kind == kinds.end()) return "its weight " + names[b.rows[0]] + " is a slot " + cls + " does not keep";
    if (b.rows.size() != n)
      return "it has " + std::to_string(b.rows.size()) + " '" + b.keras2 + "' weights for " + std::to_string(n) +
             " trainable weights";
    // A block this configuration does not use (Keras 2.2.4's vhats without amsgrad, SGD's moments
    // without momentum) restores nothing.
    if (n == 0 || !optimizer.slot(*trainable[0], kind->kerascpp)) continue;
    for (size_t i = 0; i < n; ++i) {
      const size_t row = b.rows[i];
      const VariablePtr slot = optimizer.slot(*trainable[i], kind->kerascpp);
      if (!slot) return "variable " + trainable[i]->path() + " has no " + kind->kerascpp + " slot";
      const std::string owner = is_v2(names) ? v2_variable(names[row]) : std::string();
      if (!owner.empty() && trainable[i]->path() != owner && !trainable[i]->path().ends_with("/" + owner))
        return "its weight " + names[row] + " belongs to " + owner + ", but trainable weight " + std::to_string(i) +
               " is " + trainable[i]->path();
      if (values[row].size() != slot->value().size())
        return "its weight " + names[row] + " has shape " + shape_text(values[row].shape()) + ", the " +
               kind->kerascpp + " of " + trainable[i]->path() + " " + shape_text(slot->shape());
      out.values.emplace_back(slot, values[row].reshape(slot->shape()));
      ++slots_filled;
    }
  }
  // Every slot the optimizer keeps is restored, or none: variables() is iterations, learning_rate, slots.
  const size_t slots_kept = optimizer.variables().size() - (optimizer.has_schedule() ? 1 : 2);
  if (slots_filled != slots_kept)
    return "it restores " + std::to_string(slots_filled) + " of the optimizer's " + std::to_string(slots_kept) +
           " slot variables";
  return out;
}

}  // namespace kerascpp::io
