#include "io/config_dialect.h"

#include <algorithm>
#include <functional>
#include <set>

#include "io/dialect_rules.h"
#include "layers/layer_list.h"
#include "models/call_binding.h"
#include "models/functional.h"

namespace kerascpp::io {

int keras_major(const std::string& v) {
  if (v.empty() || v[0] < '1' || v[0] > '9') return 0;
  return v[0] - '0';
}

int config_keras_major(const Json& c) {
  if (c.is_object() && c.contains("module")) return 3;
  if (c.is_object() && c.contains("keras_version") && c["keras_version"].is_string())
    return keras_major(c["keras_version"].get<std::string>());
  return 0;
}

namespace {

Json canonical_entry(Json entry, int major);

// A Keras 2 tensor reference [layer, node, tensor] as a Keras 3 __keras_tensor__.
Json keras_tensor(const Json& triple) {
  return Json{{"class_name", "__keras_tensor__"},
              {"config", {{"keras_history", Json::array({triple[0], triple[1], triple[2]})}}}};
}
bool is_triple(const Json& j) {
  return j.is_array() && j.size() == 3 && j[0].is_string() && j[1].is_number_integer() && j[2].is_number_integer();
}
// Keras 2 writes tensors inside call kwargs as [layer, node, tensor], in lists too (tf.reshape(x,
// [tf.shape(x)[0], -1, 2]): shape=[[layer, node, tensor], -1, 2]).
Json convert_kwargs(const Json& j) {
  if (is_triple(j)) return keras_tensor(j);
  if (j.is_object() || j.is_array()) {
    Json out = j.is_object() ? Json::object() : Json::array();
    for (const auto& [k, v] : j.items()) {
      if (j.is_object()) out[k] = convert_kwargs(v);
      else out.push_back(convert_kwargs(v));
    }
    return out;
  }
  return j;
}

// tf_keras lists a recurrent layer's initial states after its input in the call ([x, h, c]);
// Keras 3 passes them as initial_state=[h, c].
bool keras2_lists_initial_state(const std::string& cls) {
  return cls == "SimpleRNN" || cls == "LSTM" || cls == "GRU" || cls == "RNN" || cls == "Bidirectional" ||
         cls.rfind("ConvLSTM", 0) == 0;
}

// Keras 2 list form: one element per call, each a list of [layer, node, tensor, kwargs].
Json canonical_inbound(Json inbound, const std::string& layer_name, const std::string& cls) {
  Json out = Json::array();
  for (Json& call : inbound) {
    if (call.is_object()) {  // Keras 3 dict form already
      out.push_back(std::move(call));
      continue;
    }
    KCPP_CHECK(call.is_array() && !call.empty(), ValueError, "Invalid inbound node of layer '", layer_name,
               "': ", call.dump().substr(0, 200));
    // tf_keras's TFOpLambda keeps its argument's structure: one tensor is the reference itself, a list
    // (of one, too) a list of references.
    const bool listed = !call[0].is_string();
    if (!listed) call = Json::array({std::move(call)});
    Json tensors = Json::array(), kwargs = Json::object();
    // A reference [layer, node, tensor(, kwargs)], or (tf_keras's TFOpLambda keeps its first argument's
    // nesting: tf.concat([shape, [2]], 0)) a list of them.
    auto value_of = [&](const Json& ref, auto&& self) -> Json {
      if (ref.is_array() && !ref.empty() && !ref[0].is_string()) {
        Json nested = Json::array();
        for (const Json& e : ref) nested.push_back(self(e, self));
        return nested;
      }
      KCPP_CHECK(ref.is_array() && ref.size() >= 3 && ref[0].is_string(), ValueError, "Invalid inbound node of layer '",
                 layer_name, "': ", call.dump().substr(0, 200));
      if (ref.size() >= 4 && ref[3].is_object() && kwargs.empty()) kwargs = convert_kwargs(ref[3]);
      // A TFOpLambda whose first argument is a constant (tf.maximum(0.0, x)): ["_CONSTANT_VALUE", -1, value].
      return ref[0] == "_CONSTANT_VALUE" ? ref[2] : keras_tensor(ref);
    };
    for (const Json& ref : call) tensors.push_back(value_of(ref, value_of));
    if (tensors.size() > 1 && keras2_lists_initial_state(cls)) {
      kwargs["initial_state"] = Json(std::vector<Json>(tensors.begin() + 1, tensors.end()));
      tensors.erase(tensors.begin() + 1, tensors.end());
    }
    const bool op_lambda = cls == "TFOpLambda" || cls == "SlicingOpLambda";
    Json args = tensors.size() == 1 && !(op_lambda && listed) ? Json::array({tensors[0]}) : Json::array({tensors});
    out.push_back(Json{{"args", args}, {"kwargs", kwargs}});
  }
  return out;
}

// Keras 2's CuDNNLSTM / CuDNNGRU are LSTM / GRU(reset_after=True) with tanh and sigmoid, their weights in
// cuDNN's layout: read as those, the weights converted on load (layers/rnn/rnn.h from_legacy_layout),
// as Keras's own loader converts them into an LSTM / GRU.
void cudnn_as_keras(std::string& cls, Json& c) {
  if (cls != "CuDNNLSTM" && cls != "CuDNNGRU") return;
  c["kerascpp_cudnn"] = cls;
  c["activation"] = "tanh";
  c["recurrent_activation"] = "sigmoid";
  c["use_bias"] = true;
  if (cls == "CuDNNGRU") c["reset_after"] = true;
  cls = cls == "CuDNNLSTM" ? "LSTM" : "GRU";
}

void canonical_layer_config(const std::string& cls, Json& c, int major) {
  if (c.contains("dtype") && c["dtype"].is_object()) {  // DTypePolicy / Policy envelope
    const Json& p = c["dtype"];
    c["dtype"] = p.contains("config") && p["config"].contains("name") ? p["config"]["name"] : Json("float32");
  }
  // Wrappers (Bidirectional, TimeDistributed, RNN) hold their layers' configs: the same rules apply there.
  for (Json* e : inner_layer_entries(c)) {
    std::string inner = (*e)["class_name"].get<std::string>();
    cudnn_as_keras(inner, (*e)["config"]);
    (*e)["class_name"] = inner;
    canonical_layer_config(inner, (*e)["config"], major);
  }
  keras2_layer_keys_to_canonical(cls, c, major);  // renamed and Keras-2-only keys (dialect_rules.cpp)
  if (cls == "InputLayer" && !c.contains("batch_shape") && c.contains("shape")) {
    Json s = Json::array({nullptr});
    for (const auto& d : c["shape"]) s.push_back(d);
    c["batch_shape"] = s;
  }
  if (cls != "InputLayer") {
    // Keras 2 records the shape a layer was created with; the graph knows it, Keras 3 refuses the key.
    c.erase("batch_input_shape");
    c.erase("batch_shape");
  }
}

// Sequential: make sure layers[0] is an InputLayer (Keras 2 put batch_input_shape on the first layer;
// build_input_shape records it on a model built without one).
void add_sequential_input(Json& config) {
  Json& layers = config["layers"];
  if (layers.empty() || layers[0]["class_name"] == "InputLayer") return;
  Json& first = layers[0]["config"];
  Json shape;
  if (first.contains("batch_input_shape")) {
    shape = first["batch_input_shape"];
  } else if (first.contains("batch_shape")) {
    shape = first["batch_shape"];
  } else if (config.contains("build_input_shape") && config["build_input_shape"].is_array()) {
    shape = config["build_input_shape"];
  } else {
    return;
  }
  first.erase("batch_input_shape");
  first.erase("batch_shape");
  Json input = {{"class_name", "InputLayer"},
                {"config",
                 {{"batch_shape", shape},
                  {"dtype", first.value("dtype", Json("float32")).is_string() ? first.value("dtype", Json("float32")) : Json("float32")},
                  {"name", first.value("name", std::string("layer")) + "_input"}}}};
  layers.insert(layers.begin(), input);
}

// Keras 2 counts a nested model's own internal call as its node 0, so references to its first real
// call say node 1; Keras 3 (the canonical form) says node 0 (checked on tf_keras 2.21 and Keras 3.15
// files of the same model).
void shift_keras2_node_indices(Json& config) {
  std::set<std::string> nested;
  for (const Json& e : config["layers"]) {
    const std::string cls = e["class_name"].get<std::string>();
    const Json& sub = e["config"].value("layers", Json::array());
    if (cls == "Functional" || (cls == "Sequential" && !sub.empty() && sub[0]["class_name"] == "InputLayer"))
      nested.insert(e["config"].value("name", std::string()));
  }
  if (nested.empty()) return;
  std::function<void(Json&)> fix = [&](Json& j) {
    if (j.is_object() && j.value("class_name", std::string()) == "__keras_tensor__") {
      Json& h = j["config"]["keras_history"];
      if (nested.count(h[0].get<std::string>()) && h[1].get<int>() > 0) h[1] = h[1].get<int>() - 1;
    } else if (j.is_array() && j.size() == 3 && j[0].is_string() && j[1].is_number_integer()) {  // io triple
      if (nested.count(j[0].get<std::string>()) && j[1].get<int>() > 0) j[1] = j[1].get<int>() - 1;
    } else if (j.is_structured()) {
      for (auto& e : j) fix(e);
    }
  };
  for (Json& e : config["layers"])
    if (e.contains("inbound_nodes")) fix(e["inbound_nodes"]);
  if (config.contains("input_layers")) fix(config["input_layers"]);
  if (config.contains("output_layers")) fix(config["output_layers"]);
}

void shift_io_indices(Json& config, int delta) {
  std::set<std::string> nested;
  for (const Json& e : config.value("layers", Json::array()))
    if (e.value("class_name", std::string()) == "Functional") nested.insert(e["config"].value("name", std::string()));
  if (nested.empty()) return;
  std::function<void(Json&)> fix = [&](Json& j) {
    if (j.is_array() && j.size() == 3 && j[0].is_string() && j[1].is_number_integer()) {
      if (nested.count(j[0].get<std::string>()) && j[1].get<int>() + delta >= 0) j[1] = j[1].get<int>() + delta;
    } else if (j.is_structured()) {
      for (auto& e : j) fix(e);
    }
  };
  if (config.contains("input_layers")) fix(config["input_layers"]);
  if (config.contains("output_layers")) fix(config["output_layers"]);
}

// Every function here takes its JSON by value and moves it along: a config is copied once per load.
Json canonical_model(const std::string& cls, Json config, int major) {
  if (config.is_array()) config = Json{{"name", "sequential"}, {"layers", std::move(config)}};
  KCPP_CHECK(config.is_object() && config.contains("layers") && config["layers"].is_array(), ValueError,
             "Invalid config of model (", cls, "): expected a `layers` list");
  if (cls == "Sequential") add_sequential_input(config);  // before the first layer's shape keys go
  for (Json& e : config["layers"]) e = canonical_entry(std::move(e), major);
  if (cls != "Sequential" && major == 3) shift_io_indices(config, -1);
  if (cls != "Sequential" && major == 2) {
    shift_keras2_node_indices(config);
    // tf_keras leaves every mask to propagation (Keras 3 records what each call gets): the graph reads
    // this, and it is not part of the model's config (models/functional.h).
    config["kerascpp_propagated_masks"] = true;
  }
  return config;
}

// An op node is called once; its call, tensors replaced by placeholders, holds the arguments that
// are its own (layers/op_nodes/op_node.h). The graph reads the call's tensors.
Json op_call(const Json& inbound, const std::string& name) {
  KCPP_CHECK(inbound.size() == 1 && inbound[0].is_object(), NotImplementedError, "Operation '", name,
             "' is called ", inbound.size(), " times in the graph; kerascpp expects one call");
  return models::call_template(inbound[0]);
}

bool is_layer_class(const std::string& cls) {
  static const std::vector<std::string> known = known_layer_classes();
  return models::is_model_class(cls) || std::find(known.begin(), known.end(), cls) != known.end();
}

// The keras.ops classes named as a merge layer (ops.add(x, y) is Add, ops.average(x) is Average).
bool is_merge_named_op(const std::string& cls) {
  return cls == "Add" || cls == "Subtract" || cls == "Multiply" || cls == "Divide" || cls == "TrueDivide" ||
         cls == "Maximum" || cls == "Minimum" || cls == "Average" || cls == "Dot";
}

// Whether the entry's first call (Keras 3's node form, {"args": [...]}) has a first positional
// argument that is not a list: a merge layer takes one list of tensors, the op of its name a tensor
// or a number (x + 3.0 is Add with args [x, 3.0]; ops.average(x, axis=1) is Average with args [x]).
bool first_call_takes_no_list(const Json& entry) {
  const Json* nodes = entry.contains("inbound_nodes") ? &entry["inbound_nodes"] : nullptr;
  if (!nodes || !nodes->is_array() || nodes->empty() || !(*nodes)[0].is_object()) return false;
  const Json& node = (*nodes)[0];
  return node.contains("args") && node["args"].is_array() && !node["args"].empty() && !node["args"][0].is_array();
}

Json canonical_entry(Json entry, int major) {
  const auto class_it = entry.find("class_name"), config_it = entry.find("config");  // end() unless an object
  KCPP_CHECK(class_it != entry.end() && class_it->is_string() && config_it != entry.end(), ValueError,
             "Invalid layer entry in model config: ", entry.dump().substr(0, 200));
  Json& config = *config_it;
  std::string cls = class_it->get<std::string>();
  if (cls == "Model") cls = "Functional";
  if (cls == "GroupedQueryAttention") cls = "GroupQueryAttention";  // Keras 3's .h5 writes the Python class
  if (config.is_object()) cudnn_as_keras(cls, config);
  // Keras 3 graphs also hold keras.ops calls (x + 3.0, keras.ops.add(a, b), x[:, -1]): entries of
  // module keras.src.ops.* (and keras.activations' ReLU / Mish), whose class names collide with
  // layers' (Add, Multiply). They are named with their module ("keras.src.ops.numpy.Add", see
  // src/layers/op_nodes/op_node.h).
  const auto module_it = entry.find("module");
  const bool has_module = module_it != entry.end();
  const std::string module = has_module && module_it->is_string() ? module_it->get<std::string>() : "";
  const bool is_op = module.starts_with("keras.src.ops.") || module == "keras.src.activations.activations";
  if (is_op) cls = module + "." + cls;
  // Keras 3's legacy .h5 drops the module. There an op node shows by its config (no `trainable`) or
  // by its call: a tensor or number first where the merge layer of that name takes one list.
  // An op's config holds its name and constructor arguments only, never a layer's `trainable`. Where
  // a layer has the op's name (Reshape, Softmax, Concatenate, ReLU) a config without `trainable` may
  // still be the layer's (written by hand): only the call tells, and only for the binary ops.
  std::string op_class;
  if (!is_op && !has_module && config.is_object() && !config.contains("trainable") && !is_layer_class(cls))
    op_class = layers::keras_op_class(cls);
  if (op_class.empty() && !is_op && !has_module && is_merge_named_op(cls) && first_call_takes_no_list(entry))
    op_class = "keras.src.ops.numpy." + cls;
  const bool unmarked_op = !op_class.empty();
  if (unmarked_op) cls = op_class;
  // The entry becomes its canonical form in place: {"class_name", "config", "name", "inbound_nodes"}.
  if (models::is_model_class(cls)) {
    config = canonical_model(cls, std::move(config), major);
  } else {
    KCPP_CHECK(config.is_object(), ValueError, "Invalid config of a ", cls,
               " layer: ", config.dump().substr(0, 200));
    canonical_layer_config(cls, config, major);
    // Where tf_keras computes otherwise than Keras 3 (a fully masked softmax row: uniform, not zeros;
    // merged masks: and, not or), the layer reads this flag; the graph keeps it out of the config.
    if (major == 2 && keras2_semantics_differ(cls)) config["kerascpp_keras2"] = true;
  }
  const auto named = entry.find("name");
  const std::string name =
      named != entry.end() ? named->get<std::string>() : config.value("name", std::string());
  if (!name.empty()) {
    if (named == entry.end()) entry["name"] = name;
    config["name"] = name;
  }
  if (entry.contains("inbound_nodes"))
    entry["inbound_nodes"] = canonical_inbound(std::move(entry["inbound_nodes"]), name, cls);
  if (is_op || unmarked_op || cls == "TFOpLambda" || cls == "SlicingOpLambda")
    config["call"] = op_call(entry.value("inbound_nodes", Json::array()), name);
  entry["class_name"] = std::move(cls);
  for (auto it = entry.begin(); it != entry.end();) {  // module, registered_name, build_config, ...
    const std::string& key = it.key();
    const bool kept =
        key == "class_name" || key == "config" || key == "inbound_nodes" || (key == "name" && !name.empty());
    it = kept ? std::next(it) : entry.erase(it);
  }
  return entry;
}

}  // namespace

namespace {
// Keras 2 writes inbound nodes as lists, Keras 3 as {"args", "kwargs"} dicts.
bool has_list_inbound_nodes(const Json& j) {
  if (j.is_object()) {
    if (j.contains("inbound_nodes") && j["inbound_nodes"].is_array() && !j["inbound_nodes"].empty())
      return j["inbound_nodes"][0].is_array();
    for (const auto& [k, v] : j.items())
      if (v.is_structured() && has_list_inbound_nodes(v)) return true;
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (v.is_structured() && has_list_inbound_nodes(v)) return true;
  }
  return false;
}
}  // namespace

Json canonical_model_config(Json model_config, int major) {
  if (major == 0) major = config_keras_major(model_config);
  if (major == 0) major = has_list_inbound_nodes(model_config) ? 2 : 3;
  if (model_config.is_array()) return canonical_entry(Json{{"class_name", "Sequential"}, {"config", std::move(model_config)}}, major);
  KCPP_CHECK(model_config.is_object() && model_config.contains("class_name"), ValueError,
             "Invalid model config: expected {\"class_name\": ..., \"config\": ...}");
  const std::string cls = model_config["class_name"].get<std::string>();
  KCPP_CHECK(models::is_model_class(cls), NotImplementedError, "Unsupported model class '", cls,
             "': kerascpp loads Sequential and Functional models (a subclassed model has no config to rebuild from)");
  Json out = canonical_entry(std::move(model_config), major);
  return Json{{"class_name", std::move(out["class_name"])}, {"config", std::move(out["config"])}};
}

std::vector<Json*> inner_layer_entries(Json& c) {
  std::vector<Json*> out;
  auto entry = [](const Json& e) {
    return e.is_object() && e.value("class_name", Json()).is_string() && e.value("config", Json()).is_object();
  };
  for (const char* key : {"layer", "backward_layer", "cell"})
    if (c.contains(key) && entry(c[key])) out.push_back(&c[key]);
  if (c.contains("cells") && c["cells"].is_array())
    for (Json& cell : c["cells"])
      if (entry(cell)) out.push_back(&cell);
  return out;
}

bool keras2_semantics_differ(const std::string& cls) {
  static const std::set<std::string> classes = {"MultiHeadAttention", "Softmax", "Add", "Subtract", "Multiply",
                                                "Average", "Maximum", "Minimum", "Concatenate", "RandomFlip",
                                                "RandomCrop"};
  return classes.count(cls) > 0;
}

void shift_keras3_io_indices(Json& config, int delta) { shift_io_indices(config, delta); }

}  // namespace kerascpp::io
