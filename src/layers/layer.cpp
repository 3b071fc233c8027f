#include "kerascpp/layer.h"

#include <new>

#include "layers/build_budget.h"
#include "layers/config_utils.h"

namespace kerascpp {

Layer::Layer(Json config) : config_(std::move(config)) {
  name_ = config_.value("name", std::string());
  trainable_ = config_.value("trainable", true);
  keras2_ = config_.value("kerascpp_keras2", false);
  // Compute is float32; float16 / bfloat16 / mixed policies keep float32 variables and are computed
  // in float32 here. Anything else (quantized policies, complex, strings) is refused.
  auto it = config_.find("dtype");
  if (it != config_.end() && it->is_string()) {
    static const char* kAccepted[] = {"float32", "float16", "bfloat16", "float64", "mixed_float16", "mixed_bfloat16",
                                      "int32", "int64", "uint8", "int8", "bool"};
    const std::string d = it->get<std::string>();
    bool ok = false;
    for (const char* a : kAccepted) ok = ok || d == a;
    KCPP_CHECK(ok, NotImplementedError, "Layer '", name_, "' uses dtype '", d, "', which kerascpp does not support");
  }
  config_.erase("kerascpp_keras2");  // an object: value() above throws for anything else
}

void Layer::build(const std::vector<Shape>& input_shapes) {
  if (built_) return;
  do_build(input_shapes);
  built_ = true;
}

void Layer::set_build_budget(BuildBudget* budget) {
  budget_ = budget;
  for (Layer* sub : sublayers())
    if (sub) sub->set_build_budget(budget);
}

void Layer::set_trainable(bool value) {
  trainable_ = value;
  if (config_.is_object()) config_["trainable"] = value;
  for (Layer* sub : sublayers()) sub->set_trainable(value);
}

void Layer::expect_inputs(const std::vector<Shape>& shapes, size_t n) const {
  KCPP_CHECK(shapes.size() == n, ValueError, "Layer '", name_, "' (", class_name(), ") expects ", n,
             " input(s). Received: ", shapes.size());
}

VariablePtr Layer::add_weight(const std::string& name, const Shape& shape, bool trainable, DType dtype) {
  for (int64_t d : shape)
    KCPP_CHECK(d >= 0, ValueError, "Layer '", name_, "' cannot create weight '", name,
               "' with an unknown dimension: shape=", shape_str(shape),
               ". Its input shape must be fully known (except the batch size).");
  if (budget_) budget_->take_weight(*this, name, shape, dtype);
  Tensor value;
  try {
    value = Tensor::zeros(shape, dtype);
  } catch (const std::bad_alloc&) {
    KCPP_THROW(ValueError, "Layer '", name_, "' (", class_name(), ") cannot allocate weight '", name, "' of shape ",
               shape_str(shape), " (", dtype_name(dtype), "): out of memory");
  }
  auto v = std::make_shared<Variable>(name, name_ + "/" + name, std::move(value), trainable);
  variables_.push_back(v);
  return v;
}

// which: 0 = all (Keras 3 order), 1 = trainable, 2 = non-trainable.
void Layer::collect(std::vector<VariablePtr>* out, int which, bool parent_trainable) const {
  const bool t = parent_trainable && trainable_;
  if (which == 0) {
    for (const auto& v : variables_)
      if (v->trainable() && t) out->push_back(v);
    for (const auto& v : variables_)
      if (!(v->trainable() && t)) out->push_back(v);
  } else {
    for (const auto& v : variables_)
      if ((v->trainable() && t) == (which == 1)) out->push_back(v);
  }
  for (const Layer* l : sublayers()) l->collect(out, which, t);
}

std::vector<Tensor> Layer::compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>& masks) const {
  return {masks.empty() ? Tensor() : masks[0]};
}

std::vector<Layer::SaveableChildren> Layer::saveable_children() const {
  std::vector<Layer*> subs = sublayers();
  if (subs.empty()) return {};
  return {SaveableChildren{"layers", std::vector<const Layer*>(subs.begin(), subs.end()), true}};
}

std::vector<VariablePtr> Layer::weights() const {
  std::vector<VariablePtr> out;
  collect(&out, 0, true);
  return out;
}
std::vector<VariablePtr> Layer::trainable_weights() const {
  std::vector<VariablePtr> out;
  collect(&out, 1, true);
  return out;
}
std::vector<VariablePtr> Layer::non_trainable_weights() const {
  std::vector<VariablePtr> out;
  collect(&out, 2, true);
  return out;
}
std::vector<VariablePtr> Layer::legacy_weights() const {
  auto out = trainable_weights();
  auto nt = non_trainable_weights();
  out.insert(out.end(), nt.begin(), nt.end());
  return out;
}

std::vector<Tensor> Layer::get_weights() const { return batch_get_value(weights()); }

void Layer::set_weights(const std::vector<Tensor>& values) {
  auto vars = weights();
  KCPP_CHECK(values.size() == vars.size(), ValueError, "You called `set_weights(weights)` on layer '",
             name_, "' with a weight list of length ", values.size(), ", but the layer was expecting ",
             vars.size(), " weights.");
  // Check every shape before assigning any, so that a bad list changes nothing.
  for (size_t i = 0; i < vars.size(); ++i)
    KCPP_CHECK(values[i].defined() && values[i].shape() == vars[i]->shape(), ValueError, "Layer '",
               name_, "' weight shape ", shape_str(vars[i]->shape()), " is not compatible with provided weight shape ",
               shape_str(values[i].defined() ? values[i].shape() : Shape{}), " for weight '", vars[i]->path(), "'");
  for (size_t i = 0; i < vars.size(); ++i) vars[i]->assign(values[i]);
}

int64_t Layer::count_params() const {
  int64_t n = 0;
  for (const auto& v : weights()) n += shape_size(v->shape());
  return n;
}

}  // namespace kerascpp
