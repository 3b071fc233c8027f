#include "layers/op_nodes/op_node.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string_view>

#include "layers/layer_list.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

// A number or nested list of numbers: its shape, and its values in order.
void nested(const Json& j, Shape* shape, std::vector<float>* values, size_t depth, const std::string& who) {
  // A constant array as Keras 3 writes it (keras.ops.ones((6, 2)) in a call).
  if (j.is_object() && (j.value("class_name", std::string()) == "__tensor__" || j.value("class_name", std::string()) == "__numpy__") &&
      j.contains("config") && j["config"].contains("value"))
    return nested(j["config"]["value"], shape, values, depth, who);
  if (j.is_number() || j.is_boolean()) {
    values->push_back(j.is_boolean() ? (j.get<bool>() ? 1.f : 0.f) : j.get<float>());
    return;
  }
  KCPP_CHECK(j.is_array(), NotImplementedError, who, " has an argument kerascpp cannot pass (only tensors, numbers "
             "and lists of numbers). Received: ", j.dump().substr(0, 200));
  if (shape->size() == depth) shape->push_back(static_cast<int64_t>(j.size()));
  KCPP_CHECK((*shape)[depth] == static_cast<int64_t>(j.size()), ValueError, who, ": a constant list is ragged: ",
             j.dump().substr(0, 200));
  for (const Json& e : j) nested(e, shape, values, depth + 1, who);
}

}  // namespace

namespace {
// A constant argument (a number or nested list of numbers): its shape and values.
std::pair<Shape, std::vector<float>> constant(const Json& j, const std::string& who, const char* name) {
  std::pair<Shape, std::vector<float>> c;
  nested(j, &c.first, &c.second, 0, who + " (argument '" + name + "')");
  return c;
}
}  // namespace

template <>
Tensor Args<Tensor>::value_of(const Json& j, const char* name) const {
  if (is_input(j)) return inputs_.at(j["kerascpp_input"].get<size_t>());
  const auto [shape, values] = constant(j, who_, name);
  return Tensor::from_vector(shape, values);
}

template <>
Shape Args<Shape>::value_of(const Json& j, const char* name) const {
  if (is_input(j)) return inputs_.at(j["kerascpp_input"].get<size_t>());
  return constant(j, who_, name).first;
}

template <>
std::vector<int64_t> Args<Tensor>::ints(const char* name) const {
  std::vector<int64_t> out;
  auto walk = [&](const Json& j, auto&& self) -> void {
    if (is_input(j)) {
      const Tensor t = inputs_.at(j["kerascpp_input"].get<size_t>());
      for (int64_t i = 0; i < t.size(); ++i) {
        const float v = t.data<float>()[i];
        KCPP_CHECK(std::isfinite(v) && std::fabs(v) < 9.0e15f, ValueError, who_, ": argument '", name,
                   "' holds a tensor whose value ", v, " is not an integer");
        out.push_back(static_cast<int64_t>(v));
      }
    } else if (j.is_array()) {
      for (const Json& e : j) self(e, self);
    } else {
      check(j.is_number_integer(), name, "integers or tensors of them");
      out.push_back(j.get<int64_t>());
    }
  };
  walk(json(name), walk);
  return out;
}

template <>
std::vector<int64_t> Args<Shape>::ints(const char* name) const {
  std::vector<int64_t> out;
  auto walk = [&](const Json& j, auto&& self) -> void {
    if (is_input(j)) {
      const Shape& s = inputs_.at(j["kerascpp_input"].get<size_t>());
      KCPP_CHECK(s.size() <= 1 && (s.empty() || s[0] >= 0), NotImplementedError, who_, ": argument '", name,
                 "' is a tensor of shape ", shape_str(s), "; kerascpp needs its length when the graph is built");
      out.insert(out.end(), s.empty() ? 1 : static_cast<size_t>(s[0]), kComputed);
    } else if (j.is_array()) {
      for (const Json& e : j) self(e, self);
    } else {
      check(j.is_number_integer(), name, "integers or tensors of them");
      out.push_back(j.get<int64_t>());
    }
  };
  walk(json(name), walk);
  return out;
}

Tensor broadcast(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Tensor y = ops::detail::broadcast_to(x, shape);
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("broadcast_to", {x}, y, [s = x.shape()](const Tensor& dy) { return ops::Grads{ops::detail::sum_to(dy, s)}; });
  return y;
}

Shape same_shape(const Args<Shape>& a) { return a.value("x"); }
Shape broadcast_shape(const Args<Shape>& a) { return ops::broadcast_shape(a.value("x"), a.value("y")); }
void expect_rank(const Args<Shape>& a, const Shape& s, size_t n, const char* what) {
  KCPP_CHECK(s.size() >= n, ValueError, a.who(), ": ", what, " must have rank >= ", n, ". Received: shape=", shape_str(s));
}

namespace {

struct Registry {
  std::vector<OpDef> defs;
  std::map<std::string, const OpDef*, std::less<>> keras, tf;
};

const Registry& registry() {
  static const Registry r = [] {
    Registry r;
    for (auto family : {elementwise_ops, reduction_ops, array_ops, arrangement_ops, sorting_ops, signal_ops, cumulative_ops,
                        linalg_ops, split_join_ops, nn_ops, conv_pool_ops, numeric_ops, image_ops, creation_ops,
                        padding_ops, decomposition_ops, factorization_ops, eigen_ops})
      for (OpDef& d : family()) r.defs.push_back(std::move(d));
    // A name defined twice is a defect of the families: every use of op nodes fails on it, loudly.
    auto add = [](std::map<std::string, const OpDef*, std::less<>>& m, const std::string& name, const OpDef* d) {
      if (!m.emplace(name, d).second) throw std::logic_error("kerascpp: the op node " + name + " is defined twice");
    };
    for (const OpDef& d : r.defs) {
      if (d.keras) add(r.keras, std::string("keras.src.") + d.keras, &d);
      for (std::string names = d.tf ? d.tf : ""; !names.empty();) {
        const size_t bar = names.find('|');
        add(r.tf, names.substr(0, bar), &d);
        names = bar == std::string::npos ? "" : names.substr(bar + 1);
      }
    }
    return r;
  }();
  return r;
}

// What to say after "kerascpp does not support <name>": the supported names close to it (one's last
// dotted part containing the other's, case aside), and how many there are in all.
std::string known(const std::map<std::string, const OpDef*, std::less<>>& m, size_t strip, const std::string& name) {
  auto last = [](std::string_view s) {
    std::string t(s.substr(s.rfind('.') == std::string_view::npos ? 0 : s.rfind('.') + 1));
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  const std::string want = last(name);
  std::string close;
  for (const auto& [k, v] : m) {
    const std::string have = last(k);
    if (want.size() >= 3 && have.size() >= 3 && (have.find(want) != std::string::npos || want.find(have) != std::string::npos))
      close += (close.empty() ? "" : ", ") + k.substr(strip);
  }
  return std::to_string(m.size()) + " are supported (README.md lists them)" + (close.empty() ? "" : "; close names: " + close);
}

// Why kerascpp refuses a keras.ops class that Keras 3 can record, or "" for the others.
std::string why_refused(std::string_view cls) {
  static const std::map<std::string, const char*, std::less<>> kWhy = [] {
    std::map<std::string, const char*, std::less<>> m;
    const char* callable = "it takes a Python function, which a model file cannot hold as data";
    for (const char* c : {"core.Map", "core.Scan", "core.AssociativeScan", "core.Switch", "core.WhileLoop", "core.ForiLoop",
                          "core.Cond", "core.VectorizedMap", "linalg.JVP"})
      m[std::string("keras.src.ops.") + c] = callable;
    const char* complex = "its values are complex numbers, and kerascpp has no complex tensors";
    for (const char* c : {"linalg.Eig", "nn.Polar", "math.ViewAsComplex", "math.ViewAsReal"})
      m[std::string("keras.src.ops.") + c] = complex;
    const char* ragged = "the length of its output depends on the input's values, and kerascpp's graphs have static shapes";
    for (const char* c : {"numpy.Unique", "numpy.Nonzero", "numpy.Bincount"}) m[std::string("keras.src.ops.") + c] = ragged;
    m["keras.src.ops.numpy.Argpartition"] =
        "Keras's TensorFlow backend casts x to int32 and fails on a batch of rows, so it has no result to match";
    m["keras.src.ops.numpy.View"] =
        "it reinterprets the bits of its input as another dtype, which integers carried as float32 values cannot hold";
    return m;
  }();
  auto it = kWhy.find(cls);
  return it == kWhy.end() ? "" : it->second;
}

// The placeholders of a call template, counted.
size_t count_inputs(const Json& j) {
  if (j.is_object() && j.contains("kerascpp_input")) return 1;
  size_t n = 0;
  if (j.is_structured())
    for (const Json& e : j) n += count_inputs(e);
  return n;
}

Json call_of(const Json& config) {
  return config.value("call", Json{{"args", Json::array({Json{{"kerascpp_input", 0}}})}});
}

class OpNode : public Layer {
 public:
  // call: the node's call with its tensors as placeholders (config "call" for op nodes).
  OpNode(Json given, const Json& call, const OpDef& def, std::string cls, std::string who, bool keras3)
      : Layer(std::move(given)), def_(def), class_(std::move(cls)), who_(std::move(who)), keras3_(keras3) {
    KCPP_CHECK(call.is_object(), ValueError, "Invalid call of ", who_, ": ", call.dump().substr(0, 200));
    inputs_ = count_inputs(call);
    bound_ = Json::object();
    auto takes = [&](const std::string& key) { return std::find(def_.params.begin(), def_.params.end(), key) != def_.params.end(); };
    auto bind = [&](const std::string& key, const Json& v) {
      if (key == "name" || (v.is_null() && !takes(key))) return;  // a null is the default
      KCPP_CHECK(takes(key), NotImplementedError, who_, " is given the argument ", key, "=", v.dump().substr(0, 80),
                 ", which kerascpp does not support");
      KCPP_CHECK(!bound_.contains(key), ValueError, who_, " is given the argument '", key, "' twice");
      bound_[key] = v;
    };
    const Json args = call.value("args", Json::array());
    KCPP_CHECK(args.size() <= def_.params.size(), NotImplementedError, who_, " is given ", args.size(),
               " positional arguments; kerascpp knows ", def_.params.size());
    for (size_t i = 0; i < args.size(); ++i) bind(def_.params[i], args[i]);
    const Json kwargs = call.value("kwargs", Json::object());
    for (const auto& [k, v] : kwargs.items()) {
      std::string key = k;
      for (const auto& [tf, ours] : def_.tf_names)
        if (!keras3 && key == tf) key = ours;
      bind(key, v);
    }
    if (keras3)
      for (const auto& [k, v] : config().items())
        if (k != "call" && k != "trainable" && (k != "dtype" || takes("dtype"))) bind(k, v);
  }
  std::string class_name() const override { return class_; }
  bool is_operation() const override { return true; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, inputs_);
    const Args<Shape> a(bound_, in, who_, keras3_);
    return def_.shapes ? def_.shapes(a) : std::vector<Shape>{def_.shape(a)};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    std::vector<Tensor> f;  // integer and boolean inputs compute as float32, as kerascpp carries them
    for (const Tensor& t : in) f.push_back(t.dtype() == DType::float32 ? t : t.astype(DType::float32));
    const Args<Tensor> a(bound_, f, who_, keras3_);
    return def_.calls ? def_.calls(a) : std::vector<Tensor>{def_.call(a)};
  }

 private:
  const OpDef& def_;
  std::string class_, who_;
  Json bound_;
  size_t inputs_ = 0;
  bool keras3_;
};

}  // namespace

}  // namespace kerascpp::layers::op_nodes

namespace kerascpp::layers {
using op_nodes::OpNode;
using op_nodes::registry;
using op_nodes::call_of;

LayerPtr make_op_node(const std::string& cls, const Json& config) {
  const std::string name = config.value("name", std::string("?"));
  auto it = registry().keras.find(cls);
  const std::string why = op_nodes::why_refused(cls);
  KCPP_CHECK(why.empty(), NotImplementedError, "Operation '", name, "' is a call of ", cls, ", which kerascpp refuses: ", why);
  KCPP_CHECK(it != registry().keras.end(), NotImplementedError, "Operation '", name, "' is a call of ", cls,
             ", which kerascpp does not support. ", op_nodes::known(registry().keras, 10, cls));
  return std::make_shared<OpNode>(config, call_of(config), *it->second, cls, "Operation '" + name + "' (" + cls + ")", true);
}

std::string keras_op_class(const std::string& cls) {
  for (const auto& [k, v] : registry().keras)
    if (k.size() > cls.size() && k.compare(k.size() - cls.size(), cls.size(), cls) == 0 && k[k.size() - cls.size() - 1] == '.')
      return k;
  return "";
}

LayerPtr make_lambda_op(const std::string& function, const std::string& module, const Json& config) {
  // Keras backend functions a Lambda names (keras.ops' or a Keras 2 backend's) and the op that
  // computes them with the same arguments.
  static const std::map<std::string, std::string, std::less<>> kBackend = {
      {"l2_normalize", "math.l2_normalize"}, {"abs", "abs"}, {"sqrt", "sqrt"}, {"square", "square"}, {"exp", "exp"},
      {"log", "math.log"}, {"tanh", "tanh"}, {"sigmoid", "sigmoid"}, {"softmax", "nn.softmax"},
      {"mean", "math.reduce_mean"}, {"sum", "math.reduce_sum"}, {"max", "math.reduce_max"}, {"min", "math.reduce_min"}};
  // Only a Keras 2 file says where its function is from (Keras 3 writes "builtins" for any function,
  // a user's own `mean` too, so its names are the caller's to bind); Python's builtin abs is abs.
  const bool keras_module = module.rfind("keras", 0) == 0 || module.rfind("tf_keras", 0) == 0 ||
                            module.rfind("tensorflow", 0) == 0 || (module == "builtins" && function == "abs");
  auto b = kBackend.find(function);
  if (!config.contains("function_type") || !keras_module || b == kBackend.end()) return nullptr;
  Json kwargs = config.value("arguments", Json::object());
  if (!kwargs.is_object()) kwargs = Json::object();
  const Json call = {{"args", Json::array({Json{{"kerascpp_input", 0}}})}, {"kwargs", kwargs}};
  const std::string who = "Lambda layer '" + config.value("name", std::string("?")) + "' (" + function + ")";
  return std::make_shared<OpNode>(config, call, *registry().tf.at(b->second), "Lambda", who, false);
}

LayerPtr make_tf_op_lambda(const std::string& cls, const Json& config) {
  const std::string name = config.value("name", std::string("?"));
  const Json fn = config.value("function", Json());
  KCPP_CHECK(fn.is_string(), ValueError, "Layer '", name, "' (", cls, ") has no `function` name in its config");
  auto it = registry().tf.find(fn.get<std::string>());
  KCPP_CHECK(it != registry().tf.end(), NotImplementedError, "Layer '", name, "' (", cls,
             ") calls the TensorFlow function tf.", fn.get<std::string>(),
             ", which kerascpp does not support. ", op_nodes::known(registry().tf, 0, fn.get<std::string>()));
  return std::make_shared<OpNode>(config, call_of(config), *it->second, cls,
                                  "Layer '" + name + "' (" + cls + " tf." + fn.get<std::string>() + ")", false);
}

}  // namespace kerascpp::layers
