// keras.layers.Lambda: a function that kerascpp never reads from the file. It comes from the caller
// (CustomObjects under the function's or the layer's name: layers::lambda in C++, a Python function
// in the Python package), or, for a function saved by name that is one of the op nodes' functions
// (Keras 3 `Lambda(keras.ops.abs)`, Keras 2 `Lambda(K.l2_normalize)` saved as "function"), from
// kerascpp's own ops, since a name is data (layers/op_nodes/op_node.h).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "kerascpp/layers.h"

namespace kerascpp {

std::string layers::lambda_function_name(const Json& config) {
  auto it = config.find("function");
  if (it == config.end()) return {};
  if (it->is_object() && it->value("class_name", std::string()) == "function" && (*it)["config"].is_string())
    return (*it)["config"].get<std::string>();
  if (it->is_string() && config.value("function_type", std::string()) == "function") return it->get<std::string>();
  return {};
}

namespace {

// The config's output_shape when it is a fixed shape without the batch dimension.
std::optional<Shape> fixed_output_shape(const Json& config) {
  auto it = config.find("output_shape");
  if (it == config.end() || !it->is_array()) return std::nullopt;
  Shape s;
  for (const auto& d : *it) {
    if (!d.is_number_integer() && !d.is_null()) return std::nullopt;
    s.push_back(d.is_null() ? -1 : d.get<int64_t>());
  }
  return s;
}

class Lambda : public Layer {
 public:
  Lambda(Json given, layers::LambdaFunction fn)
      : Layer(std::move(given)),
        fn_(std::move(fn)),
        arguments_(config().value("arguments", Json::object())),
        output_shape_(fixed_output_shape(config())) {
    if (arguments_.is_null()) arguments_ = Json::object();
  }
  std::string class_name() const override { return "Lambda"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    KCPP_CHECK(!in.empty(), ValueError, "Lambda layer '", name(), "' received no inputs");
    const int64_t batch = in[0].empty() ? -1 : in[0][0];
    if (output_shape_) {
      Shape s{batch};
      s.insert(s.end(), output_shape_->begin(), output_shape_->end());
      return {s};
    }
    std::vector<Tensor> zeros;  // as Keras does for a function without output_shape: run it once
    for (Shape s : in) {
      for (int64_t& d : s) d = d < 0 ? 1 : d;
      zeros.push_back(Tensor::zeros(s));
    }
    std::vector<Shape> out;
    for (const Tensor& t : fn_(zeros, arguments_)) {
      Shape s = t.shape();
      if (!s.empty()) s[0] = batch;
      out.push_back(s);
    }
    return out;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    KCPP_CHECK(!ctx.training, NotImplementedError, "Lambda layer '", name(), "' runs a C++ function on values; "
               "kerascpp cannot take gradients through it, so a model holding it does not train");
    return fn_(in, arguments_);
  }

 private:
  layers::LambdaFunction fn_;
  Json arguments_;
  std::optional<Shape> output_shape_;
};

}  // namespace

namespace layers {
LayerFactory lambda(LambdaFunction fn) {
  KCPP_CHECK(fn != nullptr, ValueError, "layers::lambda needs a function");
  return [fn = std::move(fn)](const Json& config) { return std::make_shared<Lambda>(config, fn); };
}
}  // namespace layers

}  // namespace kerascpp
