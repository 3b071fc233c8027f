// Calls on symbolic tensors, and keras.Model(inputs, outputs) over the graph they record: the
// layers, their order and the config follow keras/src/ops/function.py (map_graph) and
// keras/src/models/functional.py (get_config), so a model built here saves as Keras saves it.
#include "models/keras_tensor.h"

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "core/naming.h"
#include "layers/config_utils.h"
#include "layers/initializers.h"
#include "models/call_binding.h"
#include "models/functional.h"

namespace kerascpp {

const Shape& KerasTensor::shape() const {
  KCPP_CHECK(node_ != nullptr, ValueError, "An empty KerasTensor has no shape");
  return node_->output_shapes[index_];
}

const LayerPtr& KerasTensor::layer() const {
  KCPP_CHECK(node_ != nullptr, ValueError, "An empty KerasTensor has no layer");
  return node_->layer;
}

namespace models {
namespace {

Json placeholder(int i) { return {{"class_name", "__keras_tensor__"}, {"config", {{"kerascpp_tensor", i}}}}; }

Json to_json(const CallArgument& a, std::vector<KerasTensor>* tensors) {
  if (const auto* t = std::get_if<KerasTensor>(&a)) {
    KCPP_CHECK(t->defined(), ValueError, "A layer was called on an empty KerasTensor");
    tensors->push_back(*t);
    return placeholder(static_cast<int>(tensors->size()) - 1);
  }
  if (const auto* list = std::get_if<std::vector<KerasTensor>>(&a)) {
    Json out = Json::array();
    for (const KerasTensor& t : *list) out.push_back(to_json(t, tensors));
    return out;
  }
  return std::get<Json>(a);
}

int tensor_index(const Json& t) { return t["config"]["kerascpp_tensor"].get<int>(); }

}  // namespace

}  // namespace models

std::vector<KerasTensor> call_layer_json(const LayerPtr& layer, Json call, std::vector<KerasTensor> tensors,
                                         std::optional<uint64_t> seed) {
  using namespace models;
  KCPP_CHECK(layer != nullptr, ValueError, "call_layer: no layer");
  const std::string who = "Layer '" + layer->name() + "' (" + layer->class_name() + ")";
  KCPP_CHECK(layer->class_name() != "InputLayer", ValueError, who, " is an input: use Input() for a symbolic input");
  const CallBinding b = bind_call(*layer, call, "", "call of layer '" + layer->name() + "'");
  std::vector<Shape> shapes;
  for (const Json* t : b.inputs) shapes.push_back(tensors.at(tensor_index(*t)).shape());
  const bool was_built = layer->built();
  layer->build(shapes);
  if (!was_built) {
    std::mt19937_64 rng(seed ? *seed : std::random_device{}());
    layers::initialize_weights(*layer, rng);
  }
  auto node = std::make_shared<SymbolicNode>();
  node->output_shapes = layer->call_output_shapes(shapes, b.options);
  node->layer = layer;
  node->call = b.normalized.is_null() ? std::move(call) : b.normalized;
  node->tensors = std::move(tensors);
  node->sequence = layer->count_call();
  std::vector<KerasTensor> out;
  for (size_t i = 0; i < node->output_shapes.size(); ++i) out.emplace_back(node, static_cast<int>(i));
  return out;
}

namespace models {

std::shared_ptr<SymbolicNode> recorded_node(const LayerPtr& layer, Json call, std::vector<KerasTensor> tensors,
                                            std::vector<Shape> output_shapes) {
  auto node = std::make_shared<SymbolicNode>();
  node->layer = layer;
  node->call = std::move(call);
  node->tensors = std::move(tensors);
  node->output_shapes = std::move(output_shapes);
  node->sequence = layer->count_call();
  return node;
}

KerasTensor input_tensor(const LayerPtr& input_layer) {
  return KerasTensor(recorded_node(input_layer, Json::object(), {}, input_layer->compute_output_shape({})), 0);
}

namespace {

bool is_input_node(const SymbolicNode& n) { return n.layer->class_name() == "InputLayer"; }

std::string describe(const KerasTensor& t) {
  return "<KerasTensor shape=" + shape_str(t.shape()) + ", dtype=float32, name=" + t.layer()->name() + ">";
}

// map_graph of keras/src/ops/function.py: the nodes from the inputs to the outputs, and the layers
// ordered by depth (deepest first), ties in the order a walk from the outputs first meets them.
struct GraphMap {
  std::vector<const SymbolicNode*> nodes;  // topological, inputs first
  std::vector<LayerPtr> layers;
  std::map<const SymbolicNode*, std::shared_ptr<const SymbolicNode>> owned;
};

GraphMap map_graph(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs) {
  std::set<const SymbolicNode*> finished, in_progress;
  std::vector<const SymbolicNode*> order;
  std::map<const Layer*, int> first_seen;
  std::map<const Layer*, LayerPtr> by_ptr;
  GraphMap g;
  std::function<void(const KerasTensor&)> walk = [&](const KerasTensor& t) {
    const SymbolicNode* n = t.node().get();
    g.owned.emplace(n, t.node());
    if (finished.count(n)) return;
    KCPP_CHECK(!in_progress.count(n), ValueError, "Tensor ", describe(t), " from layer '", n->layer->name(),
               "' is part of a cycle.");
    first_seen.emplace(n->layer.get(), static_cast<int>(first_seen.size()));
    by_ptr.emplace(n->layer.get(), n->layer);
    in_progress.insert(n);
    if (!is_input_node(*n))
      for (const KerasTensor& in : n->tensors) walk(in);
    finished.insert(n);
    in_progress.erase(n);
    order.push_back(n);
  };
  for (const KerasTensor& t : outputs) walk(t);

  std::map<const SymbolicNode*, int> node_depth;
  std::map<const Layer*, int> layer_depth;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const SymbolicNode* n = *it;
    int depth = std::max(node_depth[n], layer_depth[n->layer.get()]);
    layer_depth[n->layer.get()] = depth;
    node_depth[n] = depth;
    for (const KerasTensor& in : n->tensors)
      if (finished.count(in.node().get())) node_depth[in.node().get()] = std::max(depth + 1, node_depth[in.node().get()]);
  }
  for (const KerasTensor& t : inputs) {  // inputs the outputs do not use are kept (at depth 0)
    const SymbolicNode* n = t.node().get();
    if (layer_depth.count(n->layer.get())) continue;
    layer_depth[n->layer.get()] = 0;
    first_seen[n->layer.get()] = -1;
    by_ptr.emplace(n->layer.get(), n->layer);
    order.insert(order.begin(), n);
    g.owned.emplace(n, t.node());
  }
  g.nodes = order;
  std::vector<const Layer*> layers;
  for (const auto& [l, d] : layer_depth) layers.push_back(l);
  std::sort(layers.begin(), layers.end(), [&](const Layer* a, const Layer* b) {
    return layer_depth[a] != layer_depth[b] ? layer_depth[a] > layer_depth[b] : first_seen[a] < first_seen[b];
  });
  for (const Layer* l : layers) g.layers.push_back(by_ptr[l]);

  // Every tensor a node needs must come from the inputs.
  std::set<std::pair<const SymbolicNode*, int>> computable;
  for (const KerasTensor& t : inputs) computable.emplace(t.node().get(), t.index());
  std::vector<std::string> accessed;
  for (const SymbolicNode* n : order) {
    if (!is_input_node(*n)) {
      for (const KerasTensor& in : n->tensors) {
        if (computable.count({in.node().get(), in.index()})) continue;
        std::string list;
        for (const std::string& a : accessed) list += (list.empty() ? "'" : ", '") + a + "'";
        KCPP_THROW(ValueError, "Graph disconnected: cannot find parent for tensor ", describe(in), " at layer '",
                   n->layer->name(), "'. The following previous layers were accessed without issue: [", list, "]");
      }
      accessed.push_back(n->layer->name());
    }
    if (!is_input_node(*n))  // an Input the model is not given computes nothing
      for (size_t i = 0; i < n->output_shapes.size(); ++i) computable.emplace(n, static_cast<int>(i));
  }
  std::map<std::string, int> names;
  for (const LayerPtr& l : g.layers)
    KCPP_CHECK(++names[l->name()] == 1, ValueError, "The name \"", l->name(),
               "\" is used 2 times in the model. All layer names should be unique.");
  return g;
}

Json io_spec(const std::vector<KerasTensor>& ts, const TensorNest& nest,
             const std::function<Json(const KerasTensor&)>& triple) {
  if (nest.single && ts.size() == 1) return triple(ts[0]);
  if (!nest.keys.empty()) {
    KCPP_CHECK(nest.keys.size() == ts.size(), ValueError, "A model's dict of tensors needs one key per tensor");
    Json out = Json::object();
    for (size_t i = 0; i < ts.size(); ++i) out[nest.keys[i]] = triple(ts[i]);
    return out;
  }
  Json out = Json::array();
  for (const KerasTensor& t : ts) out.push_back(triple(t));
  return out;
}

}  // namespace

LayerPtr functional_from_tensors(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
                                 const std::string& name, const TensorNest& in, const TensorNest& out) {
  KCPP_CHECK(!inputs.empty() && !outputs.empty(), ValueError, "A Model needs inputs and outputs. Received: ",
             inputs.size(), " input(s), ", outputs.size(), " output(s)");
  for (const KerasTensor& t : inputs) {
    KCPP_CHECK(t.defined(), ValueError, "All `inputs` values must be KerasTensors. Received: an empty one");
    KCPP_CHECK(is_input_node(*t.node()), NotImplementedError, "Input ", describe(t), " of model '", name,
               "' is the output of layer '", t.layer()->name(), "', not of keras.Input: kerascpp builds models "
               "from Input tensors only");
  }
  for (const KerasTensor& t : outputs)
    KCPP_CHECK(t.defined(), ValueError, "All `outputs` values must be KerasTensors. Received: an empty one");
  const GraphMap g = map_graph(inputs, outputs);
  const std::set<const SymbolicNode*> in_graph(g.nodes.begin(), g.nodes.end());
  // Each layer's calls within this model, in call order: their indices are the config's node indices.
  std::map<const SymbolicNode*, int> node_index;
  std::map<const Layer*, std::vector<const SymbolicNode*>> calls;
  for (const SymbolicNode* n : g.nodes) calls[n->layer.get()].push_back(n);
  for (auto& [l, ns] : calls) {
    std::sort(ns.begin(), ns.end(), [](auto* a, auto* b) { return a->sequence < b->sequence; });
    for (size_t k = 0; k < ns.size(); ++k) node_index[ns[k]] = static_cast<int>(k);
  }
  auto triple = [&](const KerasTensor& t) {
    return Json::array({t.layer()->name(), node_index.at(t.node().get()), t.index()});
  };
  std::function<void(Json&, const SymbolicNode&)> fill = [&](Json& j, const SymbolicNode& n) {
    if (is_keras_tensor(j)) {
      const KerasTensor& t = n.tensors.at(tensor_index(j));
      j["config"] = {{"shape", layers::shape_to_json(t.shape())}, {"dtype", "float32"}, {"keras_history", triple(t)}};
    } else if (j.is_structured()) {
      for (auto& e : j) fill(e, n);
    }
  };
  Json config = {{"name", name.empty() ? unique_name("functional") : name}, {"trainable", true}, {"layers", Json::array()}};
  std::map<std::string, LayerPtr> existing;
  for (const LayerPtr& l : g.layers) {
    Json inbound = Json::array();
    if (l->class_name() != "InputLayer")
      for (const SymbolicNode* n : calls[l.get()]) {
        Json call = n->call;
        fill(call, *n);
        inbound.push_back(std::move(call));
      }
    config["layers"].push_back({{"module", "keras.layers"}, {"class_name", l->class_name()}, {"config", l->get_config()},
                                {"registered_name", nullptr}, {"name", l->name()}, {"inbound_nodes", std::move(inbound)}});
    existing[l->name()] = l;
  }
  config["input_layers"] = io_spec(inputs, in, triple);
  config["output_layers"] = io_spec(outputs, out, triple);
  auto model = std::make_shared<Functional>("Functional", config, nullptr, &existing);
  model->adopt_symbolic([&](const std::string& layer, int k) { return g.owned.at(calls.at(existing.at(layer).get()).at(k)); });
  return model;
}

}  // namespace models

std::vector<KerasTensor> call_layer(const LayerPtr& layer, const std::vector<CallArgument>& args,
                                    const std::map<std::string, CallArgument>& kwargs) {
  std::vector<KerasTensor> tensors;
  Json call = {{"args", Json::array()}, {"kwargs", Json::object()}};
  for (const CallArgument& a : args) call["args"].push_back(models::to_json(a, &tensors));
  for (const auto& [k, a] : kwargs) call["kwargs"][k] = models::to_json(a, &tensors);
  return call_layer_json(layer, std::move(call), std::move(tensors));
}

namespace {
// layer(argument, **options) with one output.
KerasTensor call_one(const LayerPtr& layer, const CallArgument& argument, const Json& options) {
  std::map<std::string, CallArgument> kwargs;
  for (const auto& [k, v] : options.items()) kwargs[k] = v;
  std::vector<KerasTensor> out = call_layer(layer, {argument}, kwargs);
  KCPP_CHECK(out.size() == 1, ValueError, "Layer '", layer->name(), "' gives ", out.size(),
             " outputs here: call it with kerascpp::call_layer to get them all");
  return out[0];
}
}  // namespace

KerasTensor LayerRef::operator()(const KerasTensor& x, const Json& options) const { return call_one(*this, x, options); }

KerasTensor LayerRef::operator()(const std::vector<KerasTensor>& xs, const Json& options) const {
  return call_one(*this, xs, options);
}

}  // namespace kerascpp
