#include "io/config_writer.h"

#include <functional>
#include <map>
#include <set>

#include "io/config_dialect.h"
#include "io/dialect_rules.h"
#include "kerascpp/warnings.h"
#include "models/call_binding.h"
#include "models/functional.h"

namespace kerascpp::io {
namespace {

using models::flatten_tensors;
using models::is_keras_tensor;

[[noreturn]] void unrepresentable(const Json& c, const std::string& what, const std::string& dialect) {
  KCPP_THROW(NotImplementedError, "Layer '", c.value("name", std::string("?")), "' uses ", what,
             ", which Keras ", dialect, " cannot express; save in the other Keras dialect instead");
}

// Layers that are not in keras.layers but in a keras.applications module: Keras 3 finds them by
// module and registered name (both writers) and tf_keras has no such classes (its
// InceptionResNetV2 scales with a Lambda layer). Loading needs no table: the class name suffices.
struct ApplicationLayer {
  const char* class_name;
  const char* module;
};
constexpr ApplicationLayer kApplicationLayers[] = {
    {"CustomScaleLayer", "keras.src.applications.inception_resnet_v2"},
    {"LayerScale", "keras.src.applications.convnext"},
    {"StochasticDepth", "keras.src.applications.convnext"},
};
const ApplicationLayer* application_layer(const std::string& cls) {
  for (const auto& a : kApplicationLayers)
    if (cls == a.class_name) return &a;
  return nullptr;
}

Json keras3_entry(Json e) {
  const std::string cls = e["class_name"].get<std::string>();
  if (models::is_model_class(cls)) {
    for (Json& l : e["config"]["layers"]) l = keras3_entry(std::move(l));
    if (cls != "Sequential") shift_keras3_io_indices(e["config"], +1);
    e["module"] = cls == "Sequential" ? "keras" : "keras.src.models.functional";
    e["registered_name"] = cls == "Sequential" ? Json(nullptr) : Json("Functional");
  } else {
    check_keras3_expressible(cls, e["config"]);
    if (cls == "TFOpLambda" || cls == "SlicingOpLambda")
      unrepresentable(e["config"], "a TensorFlow function (tf_keras's " + cls + ")", "3");
    // tf_keras writes BatchNormalization's axis as a list; Keras 3 takes one int.
    if (cls == "BatchNormalization" && e["config"].contains("axis") && e["config"]["axis"].is_array()) {
      Json& axis = e["config"]["axis"];
      if (axis.size() != 1) unrepresentable(e["config"], "several `axis` values (tf_keras)", "3");
      axis = Json(axis[0]);
    }
    if (cls == "BatchNormalization" && !e["config"].value("virtual_batch_size", Json()).is_null())
      unrepresentable(e["config"], "`virtual_batch_size` (tf_keras)", "3");
    for (Json* inner : inner_layer_entries(e["config"])) *inner = keras3_entry(std::move(*inner));
    const ApplicationLayer* app = application_layer(cls);
    e["module"] = app ? app->module : "keras.layers";
    e["registered_name"] = app ? Json(cls) : Json(nullptr);
    const size_t dot = cls.rfind('.');
    if (dot != std::string::npos) {  // a keras.ops node, "keras.src.ops.numpy.Add" (config_dialect.cpp)
      e["module"] = cls.substr(0, dot);
      e["class_name"] = e["registered_name"] = cls.substr(dot + 1);
      e["config"].erase("call");
    }
  }
  return e;
}

// Keras 2 layer configs: the keys and names tf-keras's constructors accept.
void keras2_layer_config(const std::string& cls, Json& c) {
  canonical_layer_keys_to_keras2(cls, c);  // renamed and Keras-3-only keys (dialect_rules.cpp)
  for (Json* e : inner_layer_entries(c)) {  // a wrapper's layers, an RNN's cell, a stack's cells
    e->erase("module");
    e->erase("registered_name");
    e->erase("build_config");
    keras2_layer_config((*e)["class_name"].get<std::string>(), (*e)["config"]);
  }
  for (auto& [key, v] : c.items()) {
    // Keras 3 initializers carry arguments Keras 2's do not know; the weights are loaded anyway.
    if (key.size() > 12 && key.compare(key.size() - 12, 12, "_initializer") == 0 && v.is_object() &&
        v.contains("class_name")) {
      Json inner = v.value("config", Json::object());
      if (inner.is_object()) {
        inner.erase("input_axes");
        inner.erase("output_axes");
      }
      v = Json{{"class_name", v["class_name"]}, {"config", inner}};
    }
  }
}

bool is_nested_keras2(const Json& e) {
  const std::string cls = e["class_name"].get<std::string>();
  const Json& sub = e["config"].value("layers", Json::array());
  return cls == "Functional" || (cls == "Sequential" && !sub.empty() && sub[0]["class_name"] == "InputLayer");
}

// The keyword arguments that carry masks: Keras 3 records the ones it fills in; tf_keras computes them.
bool is_mask_kwarg(const std::string& key) {
  return key == "mask" || key == "query_mask" || key == "value_mask" || key == "key_mask";
}

Json keras2_triple(const Json& h, const std::set<std::string>& nested) {
  int node = h[1].get<int>() + (nested.count(h[0].get<std::string>()) ? 1 : 0);
  return Json::array({h[0], node, h[2]});
}

Json keras2_io(const Json& spec, const std::set<std::string>& nested) {
  if (spec.is_array() && spec.size() == 3 && spec[0].is_string()) return Json::array({keras2_triple(spec, nested)});
  Json out = spec.is_object() ? Json::object() : Json::array();
  if (spec.is_object()) {
    for (const auto& [k, v] : spec.items()) out[k] = keras2_triple(v, nested);
  } else {
    for (const auto& v : spec) {
      Json t = keras2_io(v, nested);
      for (auto& x : t) out.push_back(x);
    }
  }
  return out;
}

Json keras2_entry(Json e);

// The names of the keras.ops nodes that only compute masks: Keras 3 records Embedding(mask_zero)'s and
// Masking's masks as not_equal / any nodes passed to later layers as `mask=`; tf_keras computes the
// same masks itself, so these nodes go. A node that also feeds data, or is an output, stays (and is
// then refused as a Keras 3 operation).
std::set<std::string> mask_only_op_nodes(const Json& config) {
  std::set<std::string> mask_only;
  std::map<std::string, std::set<std::string>> data_users;  // producer -> layers that take it as data
  for (const Json& l : config["layers"]) {
    const std::string name = l["config"]["name"].get<std::string>();
    const std::string cls = l["class_name"].get<std::string>();
    if (cls == "keras.src.ops.numpy.NotEqual" || cls == "keras.src.ops.numpy.Any" ||
        cls == "keras.src.ops.numpy.LogicalOr" || cls == "keras.src.ops.numpy.LogicalAnd" ||
        cls == "keras.src.ops.core.ConvertToTensor")
      mask_only.insert(name);
    for (const Json& call : l.value("inbound_nodes", Json::array())) {
      if (!call.is_object()) continue;
      Json data = call;
      if (data.contains("kwargs"))
        for (auto it = data["kwargs"].begin(); it != data["kwargs"].end();)
          it = is_mask_kwarg(it.key()) ? data["kwargs"].erase(it) : std::next(it);
      std::vector<const Json*> tensors;
      flatten_tensors(data, &tensors);
      for (const Json* t : tensors) data_users[(*t)["config"]["keras_history"][0].get<std::string>()].insert(name);
    }
  }
  std::function<void(const Json&)> outputs_of = [&](const Json& spec) {
    if (spec.is_array() && spec.size() == 3 && spec[0].is_string()) {
      mask_only.erase(spec[0].get<std::string>());
    } else if (spec.is_structured()) {
      for (const auto& e : spec) outputs_of(e);
    }
  };
  outputs_of(config.value("output_layers", Json::array()));
  for (bool changed = true; changed;) {  // a node feeding data to a kept layer is kept
    changed = false;
    for (auto it = mask_only.begin(); it != mask_only.end();) {
      bool feeds_data = false;
      for (const std::string& user : data_users[*it]) feeds_data = feeds_data || !mask_only.count(user);
      if (feeds_data) {
        it = mask_only.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
  }
  return mask_only;
}

Json keras2_model(const std::string& cls, Json config) {
  if (cls != "Sequential") {
    const std::set<std::string> masks = mask_only_op_nodes(config);
    // A mask= that is not one of those nodes' (a model input, a layer's output) is the user's: tf_keras
    // has no way to pass it.
    for (const Json& l : config["layers"])
      for (const Json& call : l.value("inbound_nodes", Json::array())) {
        std::vector<const Json*> given;
        const Json kwargs = call.is_object() ? call.value("kwargs", Json::object()) : Json::object();
        for (const auto& [key, value] : kwargs.items())
          if (is_mask_kwarg(key)) flatten_tensors(value, &given);
        for (const Json* t : given)
          if (!masks.count((*t)["config"]["keras_history"][0].get<std::string>()))
            unrepresentable(l["config"], "a mask given by hand (mask=" + (*t)["config"]["keras_history"][0].get<std::string>() +
                                             ")",
                            "2");
      }
    Json kept = Json::array();
    for (Json& l : config["layers"])
      if (!masks.count(l["config"]["name"].get<std::string>())) kept.push_back(std::move(l));
    config["layers"] = std::move(kept);
  }
  std::set<std::string> nested;
  if (cls != "Sequential")
    for (const Json& l : config["layers"])
      if (is_nested_keras2(l)) nested.insert(l["config"]["name"].get<std::string>());
  bool keras_masks = false;  // a Masking layer or Embedding(mask_zero) anywhere
  for (const Json& l : config["layers"])
    keras_masks = keras_masks || l["class_name"] == "Masking" ||
                  (l["class_name"] == "Embedding" && l["config"].value("mask_zero", false));
  for (Json& l : config["layers"]) {
    // tf_keras's MultiHeadAttention.from_config reads the shapes it was built for (null: built at its call).
    if (l["class_name"] == "MultiHeadAttention") {
      const Json call = l.value("inbound_nodes", Json::array()).empty() ? Json::object() : l["inbound_nodes"][0];
      auto shape_of = [&](const Json* t) { return t && is_keras_tensor(*t) ? (*t)["config"].value("shape", Json()) : Json(); };
      const Json args = call.value("args", Json::array()), kwargs = call.value("kwargs", Json::object());
      l["config"]["query_shape"] = shape_of(args.empty() ? nullptr : &args[0]);
      l["config"]["value_shape"] = shape_of(kwargs.contains("value") ? &kwargs["value"] : nullptr);
      l["config"]["key_shape"] = shape_of(kwargs.contains("key") ? &kwargs["key"] : nullptr);
      if (keras_masks && l["config"]["query_shape"].is_array() && l["config"]["query_shape"].size() >= 4)
        unrepresentable(l["config"], "inputs of rank 4 or more in a model with Keras masks (tf_keras's "
                        "MultiHeadAttention fails on such masks)", "2");
    }
    // tf_keras's one_hot encodes one value per sample (a trailing axis of 1).
    if ((l["class_name"] == "CategoryEncoding" || l["class_name"] == "Discretization") &&
        l["config"].value("output_mode", std::string()) == "one_hot")
      for (const Json& call : l.value("inbound_nodes", Json::array())) {
        const Json args = call.is_object() ? call.value("args", Json::array()) : Json::array();
        const Json shape = !args.empty() && is_keras_tensor(args[0]) ? args[0]["config"].value("shape", Json()) : Json();
        if (shape.is_array() && !shape.empty() && shape.back() != 1)
          unrepresentable(l["config"], "output_mode='one_hot' over several values per sample", "2");
      }
    if (l.contains("inbound_nodes")) {
      Json calls = Json::array();
      for (const Json& call : l["inbound_nodes"]) {
        const Json args = call.value("args", Json::array()), kwargs = call.value("kwargs", Json::object());
        std::vector<const Json*> tensors;  // pointers into args / kwargs
        flatten_tensors(args, &tensors);
        // tf_keras writes an RNN's initial_state tensors as further entries of the call, other keyword
        // arguments in a dict beside every entry, tensors there as [layer, node, tensor].
        if (kwargs.contains("initial_state")) flatten_tensors(kwargs["initial_state"], &tensors);
        std::function<Json(const Json&)> keras2_value = [&](const Json& v) {
          if (is_keras_tensor(v)) return keras2_triple(v["config"]["keras_history"], nested);
          if (!v.is_array()) return v;
          Json out = Json::array();
          for (const Json& e : v) out.push_back(keras2_value(e));
          return out;
        };
        Json extra = Json::object();
        for (const auto& [key, value] : kwargs.items())
          if (key != "initial_state" && !is_mask_kwarg(key)) extra[key] = keras2_value(value);
        Json refs = Json::array();
        const bool op_lambda = l["class_name"] == "TFOpLambda" || l["class_name"] == "SlicingOpLambda";
        auto ref = [&](const Json& v) {  // a tensor, or a TFOpLambda's constant (tf.maximum(0.0, x))
          Json r = is_keras_tensor(v) ? keras2_triple(v["config"]["keras_history"], nested)
                                      : Json::array({"_CONSTANT_VALUE", -1, v});
          r.push_back(extra);
          return r;
        };
        if (op_lambda && !args.empty()) {  // its first argument, element by element
          for (const Json& v : args[0].is_array() ? args[0] : Json::array({args[0]})) refs.push_back(ref(v));
        } else {
          for (const Json* t : tensors) refs.push_back(ref(*t));
        }
        // tf_keras's TFOpLambda keeps its first argument's structure: one tensor (or constant) is the
        // reference itself, a list of tensors a list of references.
        calls.push_back(op_lambda && !args.empty() && !args[0].is_array() ? refs[0] : refs);
      }
      l["inbound_nodes"] = calls;
    }
    l = keras2_entry(std::move(l));
  }
  if (cls != "Sequential") {
    config["input_layers"] = keras2_io(config["input_layers"], nested);
    config["output_layers"] = keras2_io(config["output_layers"], nested);
  }
  return config;
}

Json keras2_entry(Json e) {
  const std::string cls = e["class_name"].get<std::string>();
  if (models::is_model_class(cls)) {
    e["config"] = keras2_model(cls, std::move(e["config"]));
  } else {
    if (application_layer(cls)) unrepresentable(e["config"], "keras.applications' " + cls, "2");
    if (keras3_only_layer(cls)) unrepresentable(e["config"], "Keras 3's " + cls, "2");
    if (cls.find('.') != std::string::npos) unrepresentable(e["config"], "the Keras 3 operation " + cls, "2");
    e["config"].erase("call");  // a TFOpLambda's arguments are in its inbound node
    keras2_layer_config(cls, e["config"]);
  }
  return e;
}

}  // namespace

namespace {
void every_layer(const Layer& l, std::vector<const Layer*>* out) {
  out->push_back(&l);
  for (const Layer* s : l.sublayers()) every_layer(*s, out);
}

// A model whose masks reach layers that compute masked values otherwise in the other Keras (a model
// read from Keras 3 written for tf_keras, or the reverse) is written, with a warning naming them; so
// is one with a RandomCrop, which the two Kerases run otherwise at inference.
void warn_if_masks_compute_otherwise(const Model& m, KerasDialect target) {
  std::vector<const Layer*> layers;
  every_layer(m.graph(), &layers);
  bool masks = false;
  std::string differ;
  for (const Layer* l : layers) {
    const Json c = l->class_name() == "Embedding" ? l->get_config() : Json::object();
    masks = masks || l->class_name() == "Masking" || c.value("mask_zero", false);
    if (keras2_semantics_differ(l->class_name()) && l->keras2_semantics() != (target == KerasDialect::keras2))
      differ += (differ.empty() ? "'" : ", '") + l->name() + "' (" + l->class_name() + ")";
  }
  if (masks && !differ.empty())
    warn(kerascpp::detail::concat("Model '", m.graph().name(), "' is written for ", target == KerasDialect::keras2 ? "tf_keras" : "Keras 3",
                                  ", which computes masked values of ", differ, " otherwise than the Keras it was read from "
                                  "(a fully masked softmax row, merged masks): outputs at masked steps may differ"));
  std::string crops;  // RandomCrop at inference: tf_keras crops and resizes, Keras 3 passes the images through
  for (const Layer* l : layers)
    if (l->class_name() == "RandomCrop" && l->keras2_semantics() != (target == KerasDialect::keras2))
      crops += (crops.empty() ? "'" : ", '") + l->name() + "'";
  if (!crops.empty())
    warn(kerascpp::detail::concat("Model '", m.graph().name(), "' is written for ", target == KerasDialect::keras2 ? "tf_keras" : "Keras 3",
                                  ", which computes RandomCrop ", crops, " at inference otherwise than the Keras it was "
                                  "read from (tf_keras crops and resizes the images, Keras 3 passes them through): outputs differ"));
}
}  // namespace

Json keras3_model_config(const Model& model) {
  warn_if_masks_compute_otherwise(model, KerasDialect::keras3);
  return keras3_entry(model.get_config());
}

Json keras2_model_config(const Model& model) {
  warn_if_masks_compute_otherwise(model, KerasDialect::keras2);
  Json c = model.get_config();
  return Json{{"class_name", c["class_name"]}, {"config", keras2_model(c["class_name"], std::move(c["config"]))}};
}

namespace {
// An optimizer config as the given Keras deserializes it: tf-keras writes its optimizers as
// "Custom>Adam" with Keras-2-only arguments; Keras 3 adds arguments tf-keras does not know.
void optimizer_for(Json& o, KerasDialect d) {
  if (!o.is_object() || !o.contains("class_name") || !o["class_name"].is_string()) return;
  std::string cls = o["class_name"].get<std::string>();
  if (cls.rfind("Custom>", 0) == 0) cls = cls.substr(7);
  o["class_name"] = cls;
  Json& c = o["config"];
  if (d == KerasDialect::keras3) {
    if (c.is_object()) c.erase("is_legacy_optimizer"), c.erase("jit_compile");
    o["module"] = "keras.optimizers";
    if (!o.contains("registered_name")) o["registered_name"] = nullptr;
  } else {
    if (c.is_object()) {
      c.erase("loss_scale_factor");
      c.erase("gradient_accumulation_steps");
      c["is_legacy_optimizer"] = false;  // else tf-keras takes its legacy optimizers, which refuse ema_*
    }
    o.erase("module");
    o.erase("registered_name");
  }
}
}  // namespace

Json keras3_compile_config(const Model& model) {
  Json t = model.training_config();
  if (t.contains("optimizer_config")) {
    t["optimizer"] = t["optimizer_config"];
    t.erase("optimizer_config");
  }
  if (t.contains("optimizer")) optimizer_for(t["optimizer"], KerasDialect::keras3);
  return t;
}

Json legacy_training_config(const Model& model, KerasDialect d) {
  Json t = model.training_config();
  if (t.contains("optimizer")) {
    t["optimizer_config"] = t["optimizer"];
    t.erase("optimizer");
  }
  if (d == KerasDialect::keras2 && t.contains("optimizer_config")) optimizer_for(t["optimizer_config"], d);
  return t;
}

}  // namespace kerascpp::io
