#include "models/functional.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>

#include "kerascpp/warnings.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/regularizers.h"
#include "models/call_binding.h"
#include "models/keras_tensor.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::models {

bool is_model_class(const std::string& c) { return c == "Functional" || c == "Model" || c == "Sequential"; }

LayerPtr make_layer_or_model(const std::string& class_name, Json& config, const CustomObjects* custom,
                             BuildBudget* budget) {
  // A Lambda's function: the caller's under the function's name or the layer's, else kerascpp's own
  // when the name is a Keras backend function (layers/core/lambda.cpp), else the caller's for every
  // Lambda (custom "Lambda": C++ layers::lambda, Python's safe_mode=False).
  const std::string function = class_name == "Lambda" ? layers::lambda_function_name(config) : "";
  if (custom && class_name == "Lambda")
    for (const std::string& key : {function, config.value("name", std::string())}) {
      auto it = key.empty() ? custom->end() : custom->find(key);
      if (it != custom->end()) {
        LayerPtr layer = it->second(config);
        KCPP_CHECK(layer != nullptr, ValueError, "The custom object for '", key, "' made no layer");
        return layer;
      }
    }
  if (!function.empty())
    if (LayerPtr op = layers::make_lambda_op(function, config.value("module", std::string()), config)) return op;
  if (custom) {
    auto it = custom->find(class_name);
    if (it != custom->end()) {
      LayerPtr layer = it->second(config);
      KCPP_CHECK(layer != nullptr, ValueError, "The custom object for '", class_name, "' made no layer");
      return layer;
    }
  }
  LayerPtr made = is_model_class(class_name)
                      ? std::make_shared<Functional>(class_name, std::move(config), custom, nullptr, budget)
                      : make_layer(class_name, std::move(config));
  config = nullptr;  // the layer keeps it
  return made;
}

namespace {
bool is_ref_triple(const Json& j) { return j.is_array() && j.size() == 3 && j[0].is_string(); }
// A Keras tensor's config.keras_history; ValueError naming the call when it has none (a file's config
// is read through const references, where a missing key must never be looked up).
const Json& history_of(const Json& tensor, const std::string& where) {
  const bool ok = tensor.contains("config") && tensor["config"].is_object() && tensor["config"].contains("keras_history");
  KCPP_CHECK(ok, ValueError, "Invalid tensor ", tensor.dump().substr(0, 200), " in the ", where, ": it has no config.keras_history");
  return tensor["config"]["keras_history"];
}
}  // namespace

Functional::Functional(const std::string& class_name, Json given, const CustomObjects* custom,
                       const std::map<std::string, LayerPtr>* existing, BuildBudget* budget)
    : Layer(std::move(given)), class_name_(class_name), custom_(custom), existing_(existing), load_budget_(budget) {
  // The graph is built from the config it keeps (moved in: a load copies a model's config once less).
  const Json& config = config_;
  KCPP_CHECK(config.is_object() && config.contains("layers") && config["layers"].is_array(), ValueError,
             "Invalid config of model '", name(), "' (", class_name, "): expected a `layers` list");
  // The budget lives only while this constructor runs: no layer keeps it, even when building fails
  // (a custom_objects factory may hand out a layer it keeps).
  struct ReleaseBudget {
    Functional* self;
    ~ReleaseBudget() {
      if (!self->load_budget_) return;
      self->set_build_budget(nullptr);
      for (const LayerPtr& l : self->layers_) l->set_build_budget(nullptr);
      self->load_budget_ = nullptr;
    }
  } release{this};
  if (load_budget_) load_budget_->take_layers(config["layers"].size(), name());
  propagated_masks_ = config.value("kerascpp_propagated_masks", false);
  config_.erase("kerascpp_propagated_masks");
  if (class_name == "Sequential")
    build_sequential(config_);
  else
    build_functional(config_);
  std::vector<int> state(nodes_.size(), 0);
  for (const Ref& r : inputs_) infer(r.node, &state);
  for (const Ref& r : outputs_) infer(r.node, &state);
  for (auto [refs, shapes, what] : {std::tuple{&inputs_, &input_shapes_, "input"}, std::tuple{&outputs_, &output_shapes_, "output"}})
    for (const Ref& r : *refs) {
      const std::vector<Shape>& outs = nodes_[r.node].output_shapes;
      KCPP_CHECK(r.index >= 0 && r.index < static_cast<int>(outs.size()), ValueError, "The model ", what, " ",
                 "of model '", name(), "' is output ", r.index, " of layer '", layers_[nodes_[r.node].layer]->name(),
                 "', which has ", outs.size(), " output(s)");
      shapes->push_back(outs[r.index]);
    }
  plan();
  Layer::build(input_shapes_);
  if (class_name != "Sequential") complete_tensor_configs();
  inference_plan_ = InferencePlan::compile(*this, &why_not_planned_);
  custom_ = nullptr;
  existing_ = nullptr;
}

void Functional::rebuild_inference_plans() {
  std::function<void(const Layer&)> nested = [&](const Layer& layer) {
    for (Layer* sub : layer.sublayers()) {
      if (auto* f = dynamic_cast<Functional*>(sub))
        f->rebuild_inference_plans();
      else
        nested(*sub);
    }
  };
  nested(*this);
  why_not_planned_.clear();
  inference_plan_ = InferencePlan::compile(*this, &why_not_planned_);
}

// Keras 3 needs the shape and dtype of every tensor reference in a config; configs converted from
// Keras 2 have only the reference, so fill them in from the inferred shapes.
void Functional::complete_tensor_configs() {
  std::function<void(Json&)> fill = [&](Json& j) {
    if (is_keras_tensor(j)) {
      Json& c = j["config"];
      if (!c.contains("shape")) {
        Ref r = resolve(c["keras_history"], "config");
        // A call off the graph between the model's inputs and outputs (Keras drops those, and never
        // writes them) has no inferred shapes: its tensors are left as they are.
        const std::vector<Shape>& outs = nodes_[r.node].output_shapes;
        KCPP_CHECK(outs.empty() || (r.index >= 0 && r.index < static_cast<int>(outs.size())), ValueError,
                   "A tensor in the config of model '", name(), "' is output ", r.index, " of a call of layer '",
                   layers_[nodes_[r.node].layer]->name(), "', which has ", outs.size(), " output(s)");
        if (!outs.empty()) c["shape"] = layers::shape_to_json(outs[r.index]);
      }
      if (!c.contains("dtype")) c["dtype"] = "float32";
    } else if (j.is_structured()) {
      for (auto& e : j) fill(e);
    }
  };
  for (Json& e : config_["layers"])
    if (e.contains("inbound_nodes")) fill(e["inbound_nodes"]);
}

void Functional::add_layer(Json& entry) {
  // The layer's name, for an error below (add_layer_entry moves the config into the layer).
  const Json* config = entry.is_object() && entry.contains("config") ? &entry["config"] : nullptr;
  const bool named =
      config && config->is_object() && config->contains("name") && (*config)["name"].is_string();
  const std::string name_of_layer = named ? (*config)["name"].get<std::string>() : std::string();
  try {
    add_layer_entry(entry);
  } catch (const Json::exception& e) {  // a value of the wrong JSON type in the layer's config
    const std::string which = named ? "'" + name_of_layer + "'" : "#" + std::to_string(layers_.size());
    KCPP_THROW(ValueError, "Invalid config of layer ", which, " in model '", name(), "': ", e.what());
  }
}

namespace {
// Keys a reader adds for the layer alone ("kerascpp_keras2", io/config_dialect.cpp) are not part of
// the model's config.
void strip_reader_keys(Json& j) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end();) {
    if (it.key().starts_with("kerascpp_")) {
      it = j.erase(it);
    } else {
      strip_reader_keys(*it);
      ++it;
    }
  }
}
}  // namespace

// `entry` is this model's own config_["layers"][i] (the constructor builds from config_ itself), so
// nothing here may add to the list being walked.
void Functional::add_layer_entry(Json& entry) {
  KCPP_CHECK(entry.is_object() && entry.contains("class_name") && entry.contains("config"), ValueError,
             "Invalid layer entry in the config of model '", name(), "': ", entry.dump().substr(0, 200));
  const std::string cls = entry["class_name"].get<std::string>();
  Json& config = entry["config"];
  LayerPtr layer;
  if (existing_) {
    auto made = existing_->find(config.value("name", std::string()));
    if (made != existing_->end()) layer = made->second;
  }
  // A layer of kerascpp's own takes its config (a load copies no layer's config): the entry keeps
  // none, and get_config asks the layer. A layer made before, or by the caller's custom_objects (which
  // may keep a config of its own), leaves the file's config in the entry.
  if (!layer) layer = make_layer_or_model(cls, config, custom_, load_budget_);
  strip_reader_keys(config);
  KCPP_CHECK(!layer_index_.count(layer->name()), ValueError, "The name '", layer->name(),
             "' is used 2 times in model '", name(), "'. All layer names should be unique.");
  layer_index_[layer->name()] = static_cast<int>(layers_.size());
  const Json& kept = config.is_null() ? layer->config() : config;
  activity_.push_back(layer->regularizes_own_outputs()
                          ? layers::regularizer_from_config(kept.value("activity_regularizer", Json()),
                                                            "Layer '" + layer->name() + "' (" + cls + ")")
                          : layers::Regularizer());
  layers_.push_back(std::move(layer));
  in_model_layers_.push_back(true);
  layer_nodes_.emplace_back();
}

void Functional::build_sequential(Json& config) {
  Json& entries = config["layers"];
  KCPP_CHECK(!entries.empty() && entries[0].value("class_name", std::string()) == "InputLayer", ValueError,
             "Sequential model '", name(), "' has no input shape: it was saved before it was built. Build it "
             "(e.g. start it with keras.Input) and save it again.");
  if (load_budget_) load_budget_->take_nodes(entries.size(), name());
  for (Json& e : entries) {
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

void Functional::build_functional(Json& config) {
  Json& entries = config["layers"];
  for (Json& e : entries) add_layer(e);
  static const Json kNoCalls = Json::array();
  auto inbound_of = [&](size_t i) -> const Json& {  // in place: a config's calls are never copied
    return entries[i].contains("inbound_nodes") ? entries[i]["inbound_nodes"] : kNoCalls;
  };
  // Allocate every node first: a shared layer's later call may feed a layer listed before it.
  std::vector<size_t> counts(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i)
    counts[i] = layers_[i]->class_name() == "InputLayer" ? 1 : inbound_of(i).size();
  if (load_budget_) load_budget_->take_nodes(std::accumulate(counts.begin(), counts.end(), uint64_t{0}), name());
  for (size_t i = 0; i < layers_.size(); ++i) {
    for (size_t k = 0; k < counts[i]; ++k) {
      layer_nodes_[i].push_back(static_cast<int>(nodes_.size()));
      nodes_.emplace_back();
      nodes_.back().layer = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->class_name() == "InputLayer") continue;
    const Json& inbound = inbound_of(i);
    for (size_t k = 0; k < inbound.size(); ++k) add_call(static_cast<int>(i), layer_nodes_[i][k], inbound[k], static_cast<int>(k));
  }
  parse_io(config.value("input_layers", Json::array()), &inputs_, &input_names_, false);
  parse_io(config.value("output_layers", Json::array()), &outputs_, &output_names_, true);
  KCPP_CHECK(!inputs_.empty() && !outputs_.empty(), ValueError, "Model '", name(), "' has no inputs or no outputs in its config");
  for (const Ref& r : inputs_)
    KCPP_CHECK(nodes_[r.node].inputs.empty() && layers_[nodes_[r.node].layer]->class_name() == "InputLayer", ValueError,
               "Input '", layers_[nodes_[r.node].layer]->name(), "' of model '", name(), "' is not an InputLayer");
}

// One call of layer `l` (its k-th) from its inbound node in the canonical form {"args", "kwargs"}.
void Functional::add_call(int l, int id, const Json& call, int k) {
  const Layer& layer = *layers_[l];
  const std::string where = "inbound node " + std::to_string(k) + " of layer '" + layer.name() + "'";
  const CallBinding b = bind_call(layer, call, " in model '" + name() + "'", where + " in model '" + name() + "'");
  Node& n = nodes_[id];
  const std::string in = where + " of model '" + name() + "'";
  for (const Json* t : b.inputs) n.inputs.push_back(resolve(history_of(*t, in), where));
  n.masks.assign(n.inputs.size(), Ref{});
  for (size_t i = 0; i < b.masks.size(); ++i)
    if (b.masks[i]) n.masks[i] = resolve(history_of(*b.masks[i], in), where);
  n.mask_given = b.mask_given;
  n.auto_mask = b.auto_mask;
  n.tensor_arguments = b.tensor_arguments;
  n.options = b.options;
  n.training = b.training;
  if (!b.normalized.is_null()) config_.at("layers").at(l).at("inbound_nodes").at(k) = b.normalized;  // in place, see add_layer_entry
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

// Depth first without recursion (a chain of 100,000 layers must not exhaust the stack): a node is
// built once its producers are, masks first, then inputs, each in order.
void Functional::infer(int root, std::vector<int>* state) {
  std::vector<int> stack{root};
  while (!stack.empty()) {
    const int id = stack.back();
    if ((*state)[id] == 2) {
      stack.pop_back();
      continue;
    }
    Node& n = nodes_[id];
    Layer& layer = *layers_[n.layer];
    if ((*state)[id] == 0) {
      (*state)[id] = 1;
      std::vector<int> producers;
      for (const Ref& m : n.masks)
        if (m.node >= 0) producers.push_back(m.node);
      for (const Ref& r : n.inputs) producers.push_back(r.node);
      for (auto it = producers.rbegin(); it != producers.rend(); ++it) {
        KCPP_CHECK((*state)[*it] != 1, ValueError, "The graph of model '", name(), "' has a cycle through layer '",
                   layers_[nodes_[*it].layer]->name(), "'");
        if ((*state)[*it] == 0) stack.push_back(*it);
      }
      continue;
    }
    stack.pop_back();
    for (const Ref& m : n.masks)
      KCPP_CHECK(m.node < 0 || (m.index >= 0 && m.index < static_cast<int>(nodes_[m.node].output_shapes.size())),
                 ValueError, "Layer '", layer.name(), "' in model '", name(), "' takes output ", m.index, " of layer '",
                 layers_[nodes_[m.node].layer]->name(), "' as a mask, which it does not have");
    std::vector<Shape> shapes;
    for (const Ref& r : n.inputs) {
      const auto& outs = nodes_[r.node].output_shapes;
      KCPP_CHECK(r.index >= 0 && r.index < static_cast<int>(outs.size()), ValueError, "Layer '", layer.name(),
                 "' in model '", name(), "' uses output ", r.index, " of layer '", layers_[nodes_[r.node].layer]->name(),
                 "', which has ", outs.size(), " output(s)");
      shapes.push_back(outs[r.index]);
    }
    if (load_budget_) layer.set_build_budget(load_budget_);
    try {
      layer.build(shapes);
      n.output_shapes = layer.call_output_shapes(shapes, n.options);
    } catch (const Json::exception& e) {  // a value of the wrong JSON type in the layer's config
      KCPP_THROW(ValueError, "Invalid config of layer '", layer.name(), "' (", layer.class_name(), ") in model '", name(),
                 "': ", e.what());
    } catch (const std::out_of_range& e) {  // an index a config gives that a check missed (found by fuzzing)
      KCPP_THROW(ValueError, "Invalid config of layer '", layer.name(), "' (", layer.class_name(), ") in model '", name(),
                 "': an index is out of range (", e.what(), ")");
    }
    if (load_budget_)
      for (const Shape& s : n.output_shapes) load_budget_->check_output(layer, s);
    (*state)[id] = 2;
    order_.push_back(id);
  }
}

void Functional::plan() {
  last_use_.assign(nodes_.size(), -1);
  for (size_t s = 0; s < order_.size(); ++s) {
    for (const Ref& r : nodes_[order_[s]].inputs) last_use_[r.node] = static_cast<int>(s);
    for (const Ref& m : nodes_[order_[s]].masks)
      if (m.node >= 0) last_use_[m.node] = static_cast<int>(s);
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
  if (inference_plan_ && inference_plan_->takes(inputs, ctx)) return inference_plan_->run(inputs, ctx.rnn_states);
  if (ctx.training || ops::active_recorder() != nullptr) return call_graph(inputs, ctx);
  // Inference interpreted: its big tensors (a recurrent layer's projections of every step, 21 MB at a
  // batch of 1,024) take the pages the last call freed instead of fresh ones the kernel must clear
  // first (a quarter of a masked LSTM's predict). Inside fit or another model's call, theirs.
  MappingCachePool::Lease pages(&pages_);
  return call_graph(inputs, ctx);
}

namespace {
bool overlap(const Tensor& a, const Tensor& b) {
  const char *pa = static_cast<const char*>(a.raw_data()), *pb = static_cast<const char*>(b.raw_data());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}
}  // namespace

void Functional::call_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                           const CallContext& ctx) const {
  auto check = [&](size_t j, const Shape& want) {
    KCPP_CHECK(outputs[j].shape() == want, ValueError, "Output ", j, " of model '", name(), "' has shape ",
               shape_str(want), " for these inputs, but the tensor given for it has shape ",
               shape_str(outputs[j].shape()));
  };
  KCPP_CHECK(outputs.size() == outputs_.size(), ValueError, "Model '", name(), "' has ", outputs_.size(),
             " output(s), but ", outputs.size(), " output tensors were given");
  for (size_t j = 0; j < outputs.size(); ++j)
    KCPP_CHECK(outputs[j].defined() && outputs[j].dtype() == DType::float32, ValueError, "Output ", j, " of model '",
               name(), "' is written into a float32 tensor. Received: ",
               outputs[j].defined() ? std::string(dtype_name(outputs[j].dtype())) : std::string("an empty tensor"));
  if (inference_plan_ && inference_plan_->takes(inputs, ctx)) {
    const int64_t rows = inputs[0].dim(0);
    bool apart = true;  // the plan writes outputs as it goes: none may be an input or another output
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (!inference_plan_->output_shape_is(j, rows, outputs[j].shape()))
        check(j, inference_plan_->output_shape(j, rows));
      for (const Tensor& t : inputs) apart = apart && !overlap(outputs[j], t);
      for (size_t k = 0; k < j; ++k) apart = apart && !overlap(outputs[j], outputs[k]);
    }
    if (apart) return inference_plan_->run_into(inputs, outputs, ctx.rnn_states);
  }
  // Interpreted: the shapes checked before the call (a stateful one advances its states), the values
  // computed, then moved in (an output may be an input, of which the graph returned a view).
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  const std::vector<Shape> want = compute_output_shape(shapes);
  for (size_t j = 0; j < outputs.size() && j < want.size(); ++j) check(j, want[j]);
  const std::vector<Tensor> got = call(inputs, ctx);
  for (size_t j = 0; j < outputs.size(); ++j) check(j, got[j].shape());
  for (size_t j = 0; j < outputs.size(); ++j) std::memmove(outputs[j].raw_data(), got[j].raw_data(), got[j].nbytes());
}

std::vector<Tensor> Functional::call_graph(const std::vector<Tensor>& inputs, const CallContext& ctx) const {
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
    // Keras 3 fills in the masks of some inputs (Node::auto_mask) and records the masks a call was
    // given (mask=, <argument>_mask=; null for none): those are the call's, and its outputs' masks
    // come from them when they are not null. tf_keras's calls get every input's propagated mask.
    std::vector<Tensor> call_masks = in_masks;
    for (size_t i = 0; !propagated_masks_ && i < n.auto_mask.size(); ++i)
      if (!n.auto_mask[i]) call_masks[i] = Tensor();
    for (size_t i = 0; i < n.mask_given.size(); ++i) {
      if (!n.mask_given[i]) continue;
      call_masks[i] = n.masks[i].node >= 0 ? ops::as_mask(values[n.masks[i].node][n.masks[i].index]) : Tensor();
      if (call_masks[i].defined()) in_masks[i] = call_masks[i];
    }
    masked = false;
    for (const Tensor& m : in_masks) masked = masked || m.defined();
    bool call_masked = false;
    for (const Tensor& m : call_masks) call_masked = call_masked || m.defined();
    CallContext layer_ctx = ctx;
    // A call fixed with training= runs in that mode (Keras: an explicit argument wins over the
    // caller's): base_model(x, training=False) keeps BatchNormalization's statistics while the model
    // around it trains; Dropout(...)(x, training=True) drops at inference too, afresh on every call.
    if (n.training >= 0) layer_ctx.training = n.training == 1;
    if (layer_ctx.training && !ctx.training)
      layer_ctx.seed = (forced_training_calls_.fetch_add(1) + 1) * 0x9E3779B97F4A7C15ull ^ ctx.seed;
    layer_ctx.masks = call_masked && layer.supports_masking() ? &call_masks : nullptr;
    layer_ctx.options = n.options.empty() ? nullptr : &n.options;
    if (masked && !layer.supports_masking() && !layer.is_operation() && !mask_dropped_[order_[s]].exchange(true))
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
    if (!propagated_masks_ && layer.clears_input_masks())
      for (const Ref& r : n.inputs)
        if (!masks[r.node].empty()) masks[r.node][r.index] = Tensor();
    if (ctx.losses && activity_[n.layer].active())
      for (const Tensor& t : values[order_[s]]) {
        const layers::Regularizer& r = activity_[n.layer];
        KCPP_CHECK(r.unsupported.empty(), NotImplementedError, r.unsupported);
        ctx.losses->push_back(layers::activity_loss(r.l1, r.l2, t));
      }
    KCPP_ASSERT(values[order_[s]].size() == n.output_shapes.size());
    for (const Ref& r : n.inputs)
      if (last_use_[r.node] == static_cast<int>(s)) values[r.node].clear(), masks[r.node].clear();
    for (const Ref& m : n.masks)
      if (m.node >= 0 && last_use_[m.node] == static_cast<int>(s)) values[m.node].clear(), masks[m.node].clear();
  }
  std::vector<Tensor> out;
  for (const Ref& r : outputs_) out.push_back(values[r.node][r.index]);
  return out;
}

// Each layer's config from the layer, which keeps it (add_layer_entry moved it out of config_; a
// layer made before, or by custom_objects, left it in its entry); a nested model's from its own
// get_config. A layer's trainable may have changed since (Layer::set_trainable).
Json Functional::get_config() const {
  Json c = config_;
  if (c.contains("trainable") || !trainable()) c["trainable"] = trainable();
  for (size_t i = 0; i < layers_.size(); ++i) {
    Json& entry = c["layers"][i]["config"];
    if (is_model_class(layers_[i]->class_name())) {
      entry = layers_[i]->get_config();
    } else {
      if (entry.is_null()) {  // the layer keeps the config it was made from (add_layer_entry)
        entry = layers_[i]->config();
        strip_reader_keys(entry);
      }
      if (entry.contains("trainable")) entry["trainable"] = layers_[i]->trainable();
    }
    if (!entry.is_null()) entry.update(layers_[i]->config_from_assets());
  }
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

// Each node's call with its tensors as placeholders of the symbolic tensors they resolve to.
const std::vector<std::shared_ptr<const SymbolicNode>>& Functional::symbolic() const {
  std::call_once(symbolic_once_, [this] {
    symbolic_.resize(nodes_.size());
    for (int id : order_) {
      const Node& n = nodes_[id];
      const LayerPtr& layer = layers_[n.layer];
      if (n.inputs.empty()) {
        symbolic_[id] = input_tensor(layer).node();
        continue;
      }
      std::vector<KerasTensor> tensors;
      auto tensor_of = [&](const Ref& r) {
        tensors.emplace_back(symbolic_[r.node], r.index);
        return Json{{"class_name", "__keras_tensor__"}, {"config", {{"kerascpp_tensor", tensors.size() - 1}}}};
      };
      Json call;
      if (class_name_ == "Sequential") {
        call = {{"args", Json::array({tensor_of(n.inputs[0])})}, {"kwargs", Json::object()}};
      } else {
        int k = 0;
        while (layer_nodes_[n.layer][k] != id) ++k;
        call = config_["layers"][n.layer]["inbound_nodes"][k];
        std::function<void(Json&)> swap = [&](Json& j) {
          if (is_keras_tensor(j)) {
            j = tensor_of(resolve(j["config"]["keras_history"], "config"));
          } else if (j.is_structured()) {
            for (auto& e : j) swap(e);
          }
        };
        swap(call);
      }
      symbolic_[id] = recorded_node(layer, std::move(call), std::move(tensors), n.output_shapes);
    }
  });
  return symbolic_;
}

void Functional::adopt_symbolic(const NodeSource& node_of) {
  std::call_once(symbolic_once_, [&] {
    symbolic_.resize(nodes_.size());
    for (size_t l = 0; l < layers_.size(); ++l)
      for (size_t k = 0; k < layer_nodes_[l].size(); ++k) symbolic_[layer_nodes_[l][k]] = node_of(layers_[l]->name(), static_cast<int>(k));
  });
}

std::vector<KerasTensor> Functional::symbolic_inputs() const {
  std::vector<KerasTensor> out;
  for (const Ref& r : inputs_) out.emplace_back(symbolic()[r.node], r.index);
  return out;
}

std::vector<KerasTensor> Functional::symbolic_outputs() const {
  std::vector<KerasTensor> out;
  for (const Ref& r : outputs_) out.emplace_back(symbolic()[r.node], r.index);
  return out;
}

std::vector<KerasTensor> Functional::symbolic_layer_outputs(const std::string& layer_name) const {
  auto it = layer_index_.find(layer_name);
  if (it == layer_index_.end() || layer_nodes_[it->second].empty() || !symbolic()[layer_nodes_[it->second][0]]) {
    std::string names;
    for (const LayerPtr& l : layers_) names += (names.empty() ? "" : ", ") + l->name();
    KCPP_THROW(ValueError, "No such layer: ", layer_name, ". Existing layers are: [", names, "].");
  }
  const int id = layer_nodes_[it->second][0];
  std::vector<KerasTensor> out;
  for (size_t i = 0; i < nodes_[id].output_shapes.size(); ++i) out.emplace_back(symbolic()[id], static_cast<int>(i));
  return out;
}

bool reads_integer_ids(const Layer& graph) {
  static const std::set<std::string> kIds = {"Embedding", "IntegerLookup", "Hashing", "CategoryEncoding"};
  if (kIds.count(graph.class_name())) return true;
  for (const Layer* l : graph.sublayers())
    if (reads_integer_ids(*l)) return true;
  return false;
}

Tensor float32_input(const Tensor& t, bool check_ids, const std::string& model) {
  if (t.dtype() == DType::float32) return t;
  if (check_ids && (t.dtype() == DType::int64 || t.dtype() == DType::int32)) {
    constexpr int64_t exact = int64_t{1} << 24;  // float32's exact integers (layers::kExactFloatIntegers)
    for (int64_t i = 0; i < t.size(); ++i) {
      const int64_t v = t.dtype() == DType::int64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
      KCPP_CHECK(v >= -exact && v <= exact, ValueError, "Model '", model, "' received the integer ", v,
                 " in an input: its ids are computed in float32, exact for integers up to 2^24 (16777216) only");
    }
  }
  return t.astype(DType::float32);
}

}  // namespace kerascpp::models
