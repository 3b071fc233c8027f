#include "models/call_binding.h"

#include <algorithm>

namespace kerascpp::models {

bool is_keras_tensor(const Json& j) {
  return j.is_object() && j.value("class_name", std::string()) == "__keras_tensor__";
}

void flatten_tensors(const Json& j, std::vector<const Json*>* out) {
  if (is_keras_tensor(j)) {
    out->push_back(&j);
  } else if (j.is_structured()) {
    for (const auto& e : j) flatten_tensors(e, out);
  }
}

namespace {
void replace_tensors(Json& j, int* next) {
  if (is_keras_tensor(j)) {
    j = Json{{"kerascpp_input", (*next)++}};
  } else if (j.is_structured()) {
    for (auto& e : j) replace_tensors(e, next);
  }
}
}  // namespace

Json call_template(const Json& call) {
  Json out = call;
  int next = 0;
  replace_tensors(out, &next);
  return out;
}

namespace {
// A call's mask argument, one entry per tensor of the argument it belongs to (null for none): a single
// mask (or null) goes with the first tensor, a list with the tensors in order.
void flatten_masks(const Json& j, std::vector<const Json*>* out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten_masks(e, out);
  } else {
    out->push_back(&j);
  }
}
}  // namespace

CallBinding bind_call(const Layer& layer, const Json& call, const std::string& in, const std::string& where) {
  KCPP_CHECK(call.is_object(), ValueError, "Invalid ", where, ": ", call.dump().substr(0, 200));
  // References into the call: the binding points at its tensors.
  static const Json kNoArgs = Json::array(), kNoKwargs = Json::object();
  const Json& args = call.contains("args") ? call["args"] : kNoArgs;
  const Json& kwargs = call.contains("kwargs") ? call["kwargs"] : kNoKwargs;
  KCPP_CHECK(args.is_array() && kwargs.is_object(), ValueError, "Invalid ", where, ": ", call.dump().substr(0, 200));
  const std::vector<TensorArgument> params = layer.tensor_arguments();
  const Json accepted = layer.call_options();
  auto param_of = [&](const std::string& key) {
    for (size_t p = 0; p < params.size(); ++p)
      if (params[p].name == key) return static_cast<int>(p);
    return -1;
  };
  CallBinding n;
  if (layer.is_operation()) {  // its arguments are its own (layers/op_nodes/op_node.h)
    flatten_tensors(call, &n.inputs);
    KCPP_CHECK(!n.inputs.empty(), ValueError, "The ", where, " has no input tensors");
    n.tensor_arguments = 1;
    n.masks.assign(n.inputs.size(), nullptr);
    n.mask_given.assign(n.inputs.size(), 0);
    n.auto_mask.assign(n.inputs.size(), 0);
    return n;
  }
  // The JSON of each tensor argument: positional ones in order (a layer with one argument takes all of
  // them, as an op node's operands), then keywords.
  std::vector<std::vector<const Json*>> values(params.size());
  std::vector<std::pair<int, const Json*>> masks;  // (argument, its mask JSON)
  for (size_t j = 0; j < args.size(); ++j) {
    std::vector<const Json*> in_arg;
    flatten_tensors(args[j], &in_arg);
    n.tensor_arguments += in_arg.empty() ? 0 : 1;
    // Past the tensor arguments (params.size() > 1) or onto a keyword-only one, only nulls may stand.
    const bool placed = params.size() == 1 || (j < params.size() && params[j].positional);
    KCPP_CHECK(placed || args[j].is_null(), NotImplementedError, "Layer '", layer.name(), "'", in,
               " is called with ", args[j].dump().substr(0, 80), " as positional argument ", j, " (",
               j < params.size() ? "'" + params[j].name + "' is taken by keyword only" : "past its tensor arguments",
               "), which kerascpp does not support");
    if (!in_arg.empty()) values[std::min(j, params.size() - 1)].push_back(&args[j]);
  }
  for (const auto& [key, value] : kwargs.items()) {
    std::vector<const Json*> tensors;
    flatten_tensors(value, &tensors);
    const int p = param_of(key);
    if (p >= 0) {
      KCPP_CHECK(values[p].empty(), ValueError, "The ", where, " gives argument '", key, "' twice");
      if (!tensors.empty()) values[p].push_back(&value), ++n.tensor_arguments;
    } else if (key == "mask" || (key.ends_with("_mask") && param_of(key.substr(0, key.size() - 5)) >= 0)) {
      masks.emplace_back(key == "mask" ? 0 : param_of(key.substr(0, key.size() - 5)), &value);
    } else if (key == "training") {
      KCPP_CHECK(value.is_null() || value.is_boolean(), NotImplementedError, "Layer '", layer.name(), "'", in,
                 " is called with training=", value.dump().substr(0, 80), ", which kerascpp does not support");
      if (value.is_boolean()) n.training = value.get<bool>() ? 1 : 0;  // runs in that mode always, as in Keras
    } else {
      KCPP_CHECK(tensors.empty(), NotImplementedError, "Layer '", layer.name(), "'", in,
                 " is called with tensors in the keyword argument '", key, "', which kerascpp does not support");
      KCPP_CHECK(accepted.contains(key) || value.is_null(), NotImplementedError, "Layer '", layer.name(), "' (",
                 layer.class_name(), ")", in, " is called with ", key, "=", value.dump().substr(0, 80),
                 ", which kerascpp does not support");
      if (!value.is_null()) n.options[key] = value;
    }
  }
  // The inputs, argument by argument; where each argument's tensors start.
  std::vector<size_t> first(params.size(), 0), count(params.size(), 0);
  int absent = -1;
  for (size_t p = 0; p < params.size(); ++p) {
    first[p] = n.inputs.size();
    if (values[p].empty() && !params[p].defaults_to.empty()) {
      const int d = param_of(params[p].defaults_to);
      KCPP_ASSERT(d >= 0 && d < static_cast<int>(p));
      for (size_t t = 0; t < count[d]; ++t) n.inputs.push_back(n.inputs[first[d] + t]);
      count[p] = count[d];
      continue;
    }
    if (values[p].empty()) {
      if (absent < 0) absent = static_cast<int>(p);
      continue;
    }
    KCPP_CHECK(absent < 0, NotImplementedError, "Layer '", layer.name(), "'", in, " is given '",
               params[p].name, "' without '", params[absent].name, "', which kerascpp does not support");
    std::vector<const Json*> tensors;
    for (const Json* v : values[p]) flatten_tensors(*v, &tensors);
    for (const Json* t : tensors) n.inputs.push_back(t);
    count[p] = tensors.size();
  }
  KCPP_CHECK(!n.inputs.empty(), ValueError, "The ", where, " has no input tensors");
  // The config keeps arguments after the first by keyword (both Keras dialects read them so), which
  // is how tf_keras writes them (models saved for Keras 2, io/config_writer.cpp).
  if (params.size() > 1 && args.size() > 1) {
    Json normal = call;
    normal["args"] = Json::array({args[0]});
    for (size_t j = 1; j < args.size(); ++j)
      if (!args[j].is_null()) normal["kwargs"][params[j].name] = args[j];  // nulls are the defaults
    n.normalized = std::move(normal);
  }
  n.masks.assign(n.inputs.size(), nullptr);
  n.mask_given.assign(n.inputs.size(), 0);
  n.auto_mask.assign(n.inputs.size(), n.tensor_arguments <= 1);
  for (size_t p = 0; p < params.size() && n.tensor_arguments > 1; ++p)
    if (params[p].has_mask && !values[p].empty())
      for (size_t t = 0; t < count[p]; ++t) n.auto_mask[first[p] + t] = 1;
  for (const auto& [p, value] : masks) {
    std::vector<const Json*> m;
    flatten_masks(*value, &m);
    KCPP_CHECK(m.size() == count[p] || m.size() == 1, NotImplementedError, "Layer '", layer.name(), "'", in,
               " is called with ", m.size(), " masks for '", params[p].name, "', which has ", count[p],
               " tensor(s)");
    for (size_t t = 0; t < m.size() && t < count[p]; ++t) {
      KCPP_CHECK(m[t]->is_null() || is_keras_tensor(*m[t]), NotImplementedError, "Layer '", layer.name(),
                 "'", in, " is called with a mask that is not a tensor: ", m[t]->dump().substr(0, 80));
      n.mask_given[first[p] + t] = 1;
      if (!m[t]->is_null()) n.masks[first[p] + t] = m[t];
    }
  }
  return n;
}

}  // namespace kerascpp::models
