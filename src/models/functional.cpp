#include "models/functional.h"

#include <algorithm>
#include <climits>
#include <functional>

#include "kerascpp/warnings.h"
#include "layers/config_utils.h"
#include "layers/regularizers.h"
#include "ops/ops.h"

namespace kerascpp::models {

bool is_model_class(const std::string& c) { return c == "Functional" || c == "Model" || c == "Sequential"; }

LayerPtr make_layer_or_model(const std::string& class_name, const Json& config, const CustomObjects* custom) {
  if (custom) {
    auto it = custom->find(class_name);
    if (it != custom->end()) {
      LayerPtr layer = it->second(config);
      KCPP_CHECK(layer != nullptr, ValueError, "The custom object for '", class_name, "' made no layer");
      return layer;
    }
  }
  if (is_model_class(class_name)) return std::make_shared<Functional>(class_name, config, custom);
  return make_layer(class_name, config);
}

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
bool is_ref_triple(const Json& j) { return j.is_array() && j.size() == 3 && j[0].is_string(); }
}  // namespace

Functional::Functional(const std::string& class_name, const Json& config, const CustomObjects* custom)
    : Layer(config), class_name_(class_name), custom_(custom) {
  KCPP_CHECK(config.is_object() && config.contains("layers") && config["layers"].is_array(), ValueError,
             "Invalid config of model '", name(), "' (", class_name, "): expected a `layers` list");
  propagated_masks_ = config.value("kerascpp_propagated_masks", false);
  config_.erase("kerascpp_propagated_masks");
  if (class_name == "Sequential")
    build_sequential(config);
  else
    build_functional(config);
  std::vector<int> state(nodes_.size(), 0);
  for (const Ref& r : inputs_) infer(r.node, &state);
  for (const Ref& r : outputs_) infer(r.node, &state);
  for (const Ref& r : inputs_) input_shapes_.push_back(nodes_[r.node].output_shapes[r.index]);
  for (const Ref& r : outputs_) output_shapes_.push_back(nodes_[r.node].output_shapes[r.index]);
  plan();
  Layer::build(input_shapes_);
  if (class_name != "Sequential") complete_tensor_configs();
  custom_ = nullptr;
}

// Keras 3 needs the shape and dtype of every tensor reference in a config; configs converted from
// Keras 2 have only the reference, so fill them in from the inferred shapes.
void Functional::complete_tensor_configs() {
  std::function<void(Json&)> fill = [&](Json& j) {
    if (is_keras_tensor(j)) {
      Json& c = j["config"];
      if (!c.contains("shape")) {
        Ref r = resolve(c["keras_history"], "config");
        c["shape"] = layers::shape_to_json(nodes_[r.node].output_shapes[r.index]);
      }
      if (!c.contains("dtype")) c["dtype"] = "float32";
    } else if (j.is_structured()) {
      for (auto& e : j) fill(e);
    }
  };
  for (Json& e : config_["layers"])
    if (e.contains("inbound_nodes")) fill(e["inbound_nodes"]);
}

void Functional::add_layer(const Json& entry) {
  KCPP_CHECK(entry.is_object() && entry.contains("class_name") && entry.contains("config"), ValueError,
             "Invalid layer entry in the config of model '", name(), "': ", entry.dump().substr(0, 200));
  const std::string cls = entry["class_name"].get<std::string>();
  LayerPtr layer = make_layer_or_model(cls, entry["config"], custom_);
  KCPP_CHECK(!layer_index_.count(layer->name()), ValueError, "The name '", layer->name(),
             "' is used 2 times in model '", name(), "'. All layer names should be unique.");
  layer_index_[layer->name()] = static_cast<int>(layers_.size());
  activity_.push_back(layers::regularizer_from_config(entry["config"].value("activity_regularizer", Json()),
                                                      "Layer '" + layer->name() + "' (" + cls + ")"));
  layers_.push_back(std::move(layer));
  in_model_layers_.push_back(true);
  layer_nodes_.emplace_back();
}

void Functional::build_sequential(const Json& config) {
  const Json& entries = config["layers"];
  KCPP_CHECK(!entries.empty() && entries[0].value("class_name", std::string()) == "InputLayer", ValueError,
             "Sequential model '", name(), "' has no input shape: it was saved before it was built. Build it "
             "(e.g. start it with keras.Input) and save it again.");
  for (const auto& e : entries) {
    add_layer(e);
    Node n;
    n.layer = static_cast<int>(layers_.size()) - 1;
    if (n.layer > 0) n.inputs = {Ref{static_cast<int>(nodes_.size()) - 1, 0}};
    layer_nodes_.back().push_back(static_cast<int>(nodes_.size()));
    nodes_.push_back(n);
  }
  in_model_layers_[0] = false;
  inputs_ = {Ref{0, 0}};
  outputs_ = {Ref{static_cast<int>(nodes_.size()) - 1, 0}};
  input_names_ = {layers_.front()->name()};
  output_names_ = {layers_.back()->name()};
}

void Functional::build_functional(const Json& config) {
  const Json& entries = config["layers"];
  for (const auto& e : entries) add_layer(e);
  // Allocate every node first: a shared layer's later call may feed a layer listed before it.
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Json& inbound = entries[i].value("inbound_nodes", Json::array());
    size_t count = layers_[i]->class_name() == "InputLayer" ? 1 : inbound.size();
    for (size_t k = 0; k < count; ++k) {
      layer_nodes_[i].push_back(static_cast<int>(nodes_.size()));
      nodes_.emplace_back();
      nodes_.back().layer = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->class_name() == "InputLayer") continue;
    const Json& inbound = entries[i].value("inbound_nodes", Json::array());
    for (size_t k = 0; k < inbound.size(); ++k) {
      const Json& call = inbound[k];
      KCPP_CHECK(call.is_object(), ValueError, "Invalid inbound node ", k, " of layer '", layers_[i]->name(),
                 "' in model '", name(), "': ", call.dump().substr(0, 200));
      const Json args = call.value("args", Json::array()), kwargs = call.value("kwargs", Json::object());
      std::vector<const Json*> tensors;  // pointers into args / kwargs
      flatten_tensors(args, &tensors);
      const std::vector<std::string> taken = layers_[i]->tensor_kwargs();
      for (const std::string& key : taken)
        if (kwargs.contains(key)) flatten_tensors(kwargs[key], &tensors);
      std::vector<const Json*> mask;  // Keras 3 passes the masks it computed as `mask=`
      if (kwargs.contains("mask")) flatten_tensors(kwargs["mask"], &mask);
      KCPP_CHECK(mask.size() <= 1, NotImplementedError, "Layer '", layers_[i]->name(), "' in model '", name(),
                 "' is called with ", mask.size(), " mask tensors; kerascpp takes one, for the first input");
      for (const auto& [key, value] : kwargs.items()) {
        std::vector<const Json*> kw;
        flatten_tensors(value, &kw);
        KCPP_CHECK(kw.empty() || key == "mask" || std::find(taken.begin(), taken.end(), key) != taken.end(),
                   NotImplementedError, "Layer '", layers_[i]->name(), "' in model '", name(),
                   "' is called with tensors in the keyword argument '", key, "', which kerascpp does not support");
      }
      std::string where = "inbound node " + std::to_string(k) + " of layer '" + layers_[i]->name() + "'";
      for (const Json* t : tensors) nodes_[layer_nodes_[i][k]].inputs.push_back(resolve((*t)["config"]["keras_history"], where));
      if (!mask.empty()) nodes_[layer_nodes_[i][k]].mask = resolve((*mask[0])["config"]["keras_history"], where);
      nodes_[layer_nodes_[i][k]].mask_given = kwargs.contains("mask");
      int& arguments = nodes_[layer_nodes_[i][k]].tensor_arguments;
      for (const Json& a : args) {
        std::vector<const Json*> in_arg;
        flatten_tensors(a, &in_arg);
        arguments += in_arg.empty() ? 0 : 1;
      }
      for (const std::string& key : taken)
        if (kwargs.contains(key)) ++arguments;
      KCPP_CHECK(!tensors.empty(), ValueError, "The ", where, " in model '", name(), "' has no input tensors");
    }
  }
  parse_io(config.value("input_layers", Json::array()), &inputs_, &input_names_, false);
  parse_io(config.value("output_layers", Json::array()), &outputs_, &output_names_, true);
  KCPP_CHECK(!inputs_.empty() && !outputs_.empty(), ValueError, "Model '", name(), "' has no inputs or no outputs in its config");
  for (const Ref& r : inputs_)
    KCPP_CHECK(nodes_[r.node].inputs.empty() && layers_[nodes_[r.node].layer]->class_name() == "InputLayer", ValueError,
               "Input '", layers_[nodes_[r.node].layer]->name(), "' of model '", name(), "' is not an InputLayer");
}

Functional::Ref Functional::resolve(const Json& h, const std::string& where) const {
  KCPP_CHECK(is_ref_triple(h) && h[1].is_number_integer() && h[2].is_number_integer(), ValueError, "Invalid tensor reference ",
             h.dump(), " in the ", where, " of model '", name(), "'");
  const std::string producer = h[0].get<std::string>();
  auto it = layer_index_.find(producer);
  KCPP_CHECK(it != layer_index_.end(), ValueError, "The ", where, " of model '", name(), "' refers to layer '", producer,
             "', which is not in the model");
  int node = h[1].get<int>();
  const auto& nodes = layer_nodes_[it->second];
  KCPP_CHECK(node >= 0 && node < static_cast<int>(nodes.size()), ValueError, "The ", where, " of model '", name(),
             "' refers to call ", h[1].get<int>(), " of layer '", producer, "', which has ", nodes.size(), " call(s)");
  return Ref{nodes[node], h[2].get<int>()};
}

void Functional::parse_io(const Json& spec, std::vector<Ref>* refs, std::vector<std::string>* names, bool outputs) {
  const std::string what = outputs ? "output_layers" : "input_layers";
  if (is_ref_triple(spec)) {
    refs->push_back(resolve(spec, what));
    names->push_back(spec[0].get<std::string>());
  } else if (spec.is_array()) {
    for (const auto& e : spec) parse_io(e, refs, names, outputs);
  } else if (spec.is_object()) {
    for (const auto& [key, e] : spec.items()) {  // sorted keys, as Keras flattens dicts
      KCPP_CHECK(is_ref_triple(e), NotImplementedError, "Nested structures inside dict ", what, " of model '", name(), "'");
      refs->push_back(resolve(e, what));
      names->push_back(key);
    }
  } else {
    KCPP_THROW(ValueError, "Invalid ", what, " in the config of model '", name(), "': ", spec.dump());
  }
}

void Functional::infer(int id, std::vector<int>* state) {
  if ((*state)[id] == 2) return;
  Node& n = nodes_[id];
  Layer& layer = *layers_[n.layer];
  KCPP_CHECK((*state)[id] == 0, ValueError, "The graph of model '", name(), "' has a cycle through layer '", layer.name(), "'");
  (*state)[id] = 1;
  if (n.mask.node >= 0) {
    infer(n.mask.node, state);
    KCPP_CHECK(n.mask.index >= 0 && n.mask.index < static_cast<int>(nodes_[n.mask.node].output_shapes.size()),
               ValueError, "Layer '", layer.name(), "' in model '", name(), "' takes output ", n.mask.index,
               " of layer '", layers_[nodes_[n.mask.node].layer]->name(), "' as its mask, which it does not have");
  }
  std::vector<Shape> shapes;
  for (const Ref& r : n.inputs) {
    infer(r.node, state);
    const auto& outs = nodes_[r.node].output_shapes;
    KCPP_CHECK(r.index >= 0 && r.index < static_cast<int>(outs.size()), ValueError, "Layer '", layer.name(),
               "' in model '", name(), "' uses output ", r.index, " of layer '", layers_[nodes_[r.node].layer]->name(),
               "', which has ", outs.size(), " output(s)");
    shapes.push_back(outs[r.index]);
  }
  layer.build(shapes);
  n.output_shapes = layer.compute_output_shape(shapes);
  (*state)[id] = 2;
  order_.push_back(id);
}

void Functional::plan() {
  last_use_.assign(nodes_.size(), -1);
  for (size_t s = 0; s < order_.size(); ++s) {
    for (const Ref& r : nodes_[order_[s]].inputs) last_use_[r.node] = static_cast<int>(s);
    if (nodes_[order_[s]].mask.node >= 0) last_use_[nodes_[order_[s]].mask.node] = static_cast<int>(s);
  }
  for (const Ref& r : outputs_) last_use_[r.node] = INT_MAX;
  mask_dropped_ = std::make_unique<std::atomic<bool>[]>(nodes_.size());
}

std::vector<Shape> Functional::compute_output_shape(const std::vector<Shape>& in) const {
  KCPP_CHECK(in.size() == input_shapes_.size(), ValueError, "Model '", name(), "' expects ", input_shapes_.size(),
             " input(s), but it received ", in.size(), " input tensors.");
  for (size_t i = 0; i < in.size(); ++i) {
    bool ok = in[i].size() == input_shapes_[i].size();
    for (size_t d = 0; ok && d < in[i].size(); ++d)
      ok = input_shapes_[i][d] < 0 || in[i][d] < 0 || input_shapes_[i][d] == in[i][d];
    KCPP_CHECK(ok, ValueError, "Input ", i, " of model '", name(), "' is incompatible with the model: expected shape=",
               shape_str(input_shapes_[i]), ", found shape=", shape_str(in[i]));
  }
  std::vector<Shape> out = output_shapes_;
  if (!in.empty() && !in[0].empty())
    for (Shape& s : out)
      if (!s.empty()) s[0] = in[0][0];
  return out;
}

std::vector<Tensor> Functional::call(const std::vector<Tensor>& inputs, const CallContext& ctx) const {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  compute_output_shape(shapes);  // validates the inputs
  std::vector<std::vector<Tensor>> values(nodes_.size());
  // Masks beside the values (Keras's _keras_mask): per node, one per output, or none at all.
  std::vector<std::vector<Tensor>> masks(nodes_.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[inputs_[i].node] = {inputs[i]};
    if (ctx.mask(i).defined()) masks[inputs_[i].node] = {ops::as_mask(ctx.mask(i))};
  }
  for (size_t s = 0; s < order_.size(); ++s) {
    const Node& n = nodes_[order_[s]];
    if (n.inputs.empty()) {
      KCPP_CHECK(!values[order_[s]].empty(), ValueError, "Layer '", layers_[n.layer]->name(), "' of model '", name(),
                 "' is an input that was not given");
      continue;
    }
    const Layer& layer = *layers_[n.layer];
    std::vector<Tensor> ins, in_masks;
    ins.reserve(n.inputs.size());
    bool masked = false;
    for (const Ref& r : n.inputs) {
      ins.push_back(values[r.node][r.index]);
      in_masks.push_back(masks[r.node].empty() ? Tensor() : masks[r.node][r.index]);
      masked = masked || in_masks.back().defined();
    }
    // Keras 3 records the mask a call gets as `mask=` (null for none): the call's mask, and the one its
    // outputs' masks come from when it is not null. Otherwise the first input's carries on.
    std::vector<Tensor> call_masks = in_masks;
    if (n.mask_given) {
      call_masks[0] = n.mask.node >= 0 ? ops::as_mask(values[n.mask.node][n.mask.index]) : Tensor();
      if (n.mask.node >= 0) in_masks[0] = call_masks[0];
      masked = false;
      for (const Tensor& m : in_masks) masked = masked || m.defined();
    } else if (!propagated_masks_ && n.tensor_arguments > 1) {
      call_masks.assign(call_masks.size(), Tensor());  // Keras 3 fills in `mask` for one tensor argument only
    }
    bool call_masked = false;
    for (const Tensor& m : call_masks) call_masked = call_masked || m.defined();
    CallContext layer_ctx = ctx;
    layer_ctx.masks = call_masked && layer.supports_masking() ? &call_masks : nullptr;
    if (masked && !layer.supports_masking() && !mask_dropped_[order_[s]].exchange(true))
      warn(kerascpp::detail::concat("Layer '", layer.name(), "' (of type ", layer.class_name(),
           ") was passed an input with a mask attached to it. However, this layer does not support masking and "
           "will therefore destroy the mask information. Downstream layers will not see the mask."));
    values[order_[s]] = layer.call(ins, layer_ctx);
    if (layer.supports_masking()) {
      std::vector<Tensor> out_masks = layer.compute_mask(ins, masked ? in_masks : std::vector<Tensor>{});
      KCPP_ASSERT(out_masks.size() <= values[order_[s]].size());
      bool any = false;
      for (const Tensor& m : out_masks) any = any || m.defined();
      if (any) masks[order_[s]] = std::move(out_masks);
      masks[order_[s]].resize(any ? values[order_[s]].size() : 0);
    }
    if (ctx.losses && activity_[n.layer].active())
      for (const Tensor& t : values[order_[s]]) {
        const layers::Regularizer& r = activity_[n.layer];
        KCPP_CHECK(r.unsupported.empty(), NotImplementedError, r.unsupported);
        ctx.losses->push_back(layers::activity_loss(r.l1, r.l2, t));
      }
    KCPP_ASSERT(values[order_[s]].size() == n.output_shapes.size());
    for (const Ref& r : n.inputs)
      if (last_use_[r.node] == static_cast<int>(s)) values[r.node].clear(), masks[r.node].clear();
    if (n.mask.node >= 0 && last_use_[n.mask.node] == static_cast<int>(s))
      values[n.mask.node].clear(), masks[n.mask.node].clear();
  }
  std::vector<Tensor> out;
  for (const Ref& r : outputs_) out.push_back(values[r.node][r.index]);
  return out;
}

// Nested models completed their own configs (complete_tensor_configs) after this config was copied.
Json Functional::get_config() const {
  Json c = config_;
  for (size_t i = 0; i < layers_.size(); ++i)
    if (is_model_class(layers_[i]->class_name())) c["layers"][i]["config"] = layers_[i]->get_config();
  return c;
}

std::vector<Layer*> Functional::sublayers() const {
  std::vector<Layer*> out;
  for (size_t i = 0; i < layers_.size(); ++i)
    if (in_model_layers_[i]) out.push_back(layers_[i].get());
  return out;
}

std::vector<Functional::LayerCall> Functional::layer_calls() const {
  std::vector<LayerCall> out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!in_model_layers_[i] || layer_nodes_[i].empty()) continue;
    const Node& n = nodes_[layer_nodes_[i][0]];
    LayerCall c{layers_[i].get(), n.output_shapes, {}};
    for (const Ref& r : n.inputs) {
      int l = nodes_[r.node].layer, k = 0;
      while (layer_nodes_[l][k] != r.node) ++k;
      c.inbound.push_back(layers_[l]->name() + "[" + std::to_string(k) + "][" + std::to_string(r.index) + "]");
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kerascpp::models
