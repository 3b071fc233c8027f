// The keras.ops calls that Keras 3 records as nodes of a functional graph when a model is built
// with them or with operators on Keras tensors (keras/src/ops/numpy.py: Add, Subtract, Multiply,
// Divide, TrueDivide, Maximum, Minimum, NotEqual, LogicalOr, LogicalAnd), Any and ConvertToTensor. MobileNetV3 writes `x + 3.0` and
// `x * (1 / 6)`, ConvNeXt `inputs + x`; Embedding(mask_zero) and Masking write their masks as
// not_equal(x, 0) and any(not_equal(x, v), axis=-1), merges combine masks with logical_or. The binary ones take two operands, tensors or
// numbers, with numpy broadcasting; booleans are float32 1 / 0 (how kerascpp carries masks).
//
// Canonical class names carry the Keras module ("keras.src.ops.numpy.Add"), since Add and Multiply
// are also layer names; `call_args` holds the positional arguments with tensors as null
// ([null, 3.0]): both are set by src/io/config_dialect.cpp and undone by config_writer.cpp.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
using ops::BinaryOp;
namespace {

class NumpyBinary : public Layer {
 public:
  using Fn = Tensor (*)(const Tensor&, const Tensor&);
  NumpyBinary(const Json& config, const char* cls, Fn op) : Layer(config), class_(cls), op_(op) {
    const Json args = config.value("call_args", Json::array({nullptr, nullptr}));
    KCPP_CHECK(args.is_array() && args.size() == 2, ValueError, "Operation '", name(), "' (", class_,
               ") takes 2 arguments. Received: call_args=", args.dump());
    for (const Json& a : args) {
      KCPP_CHECK(a.is_null() || a.is_number(), ValueError, "Operation '", name(), "' (", class_,
                 "): each argument must be a tensor (null) or a number. Received: call_args=", args.dump());
      constants_.push_back(a.is_null() ? Tensor() : Tensor::from_vector({}, {a.get<float>()}));
      if (a.is_null()) ++tensors_;
    }
  }
  std::string class_name() const override { return class_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, tensors_);
    Shape out;
    for (const Shape& s : in) out = ops::broadcast_shape(out, s);
    return {out};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Tensor a = constants_[0].defined() ? constants_[0] : in[0];
    Tensor b = constants_[1].defined() ? constants_[1] : in[tensors_ - 1];
    return {op_(a, b)};
  }

 private:
  std::string class_;
  Fn op_;
  std::vector<Tensor> constants_;  // per argument: a scalar, or undefined for a tensor
  size_t tensors_ = 0;
};

// keras.ops.any(x, axis, keepdims): whether any element along the axes is nonzero.
class NumpyAny : public Layer {
 public:
  explicit NumpyAny(const Json& config)
      : Layer(config), keepdims_(get<bool>(config, "keepdims", false)) {
    const Json axis = config.value("axis", Json());
    KCPP_CHECK(axis.is_null() || axis.is_number_integer() || axis.is_array(), ValueError, "Operation '", name(),
               "' (Any): axis must be null, an int or a list of ints. Received: axis=", axis.dump());
    if (axis.is_number_integer()) axes_.push_back(axis.get<int>());
    if (axis.is_array())
      for (const Json& a : axis) axes_.push_back(a.get<int>());
  }
  std::string class_name() const override { return "keras.src.ops.numpy.Any"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    std::vector<bool> reduced(in[0].size(), axes_.empty());
    for (int a : axes_) reduced[ops::normalize_axis(a, static_cast<int>(in[0].size()))] = true;
    Shape out;
    for (size_t d = 0; d < in[0].size(); ++d)
      if (!reduced[d] || keepdims_) out.push_back(reduced[d] ? 1 : in[0][d]);
    return {out};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::any(in[0], axes_, keepdims_)};
  }

 private:
  std::vector<int> axes_;
  bool keepdims_;
};

template <ops::BinaryOp op>
Tensor binary(const Tensor& a, const Tensor& b) {
  return ops::binary(op, a, b);
}
// logical_or / logical_and of masks (any dtype, nonzero is true) as 1 / 0.
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return ops::binary(BinaryOp::maximum, ops::as_mask(a), ops::as_mask(b));
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return ops::binary(BinaryOp::multiply, ops::as_mask(a), ops::as_mask(b));
}

// keras.ops.convert_to_tensor(x) on a tensor: x itself. Keras 3 records it where a layer's
// compute_mask converts a mask (Attention's); a dtype, sparse or ragged argument is refused.
class ConvertToTensor : public Layer {
 public:
  explicit ConvertToTensor(const Json& config) : Layer(config) {
    for (const char* key : {"dtype", "sparse", "ragged"})
      KCPP_CHECK(config.value(key, Json()).is_null() || config[key] == false, NotImplementedError, "Operation '",
                 name(), "' (ConvertToTensor) with ", key, "=", config[key].dump(), " is not supported");
  }
  std::string class_name() const override { return "keras.src.ops.core.ConvertToTensor"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override { return in; }
};

}  // namespace
#define KCPP_NUMPY_BINARY(factory, cls, fn) \
  LayerPtr factory(const Json& c) { return std::make_shared<NumpyBinary>(c, "keras.src.ops.numpy." cls, fn); }
KCPP_NUMPY_BINARY(make_numpy_add, "Add", binary<BinaryOp::add>)
KCPP_NUMPY_BINARY(make_numpy_subtract, "Subtract", binary<BinaryOp::subtract>)
KCPP_NUMPY_BINARY(make_numpy_multiply, "Multiply", binary<BinaryOp::multiply>)
KCPP_NUMPY_BINARY(make_numpy_divide, "Divide", binary<BinaryOp::divide>)
KCPP_NUMPY_BINARY(make_numpy_true_divide, "TrueDivide", binary<BinaryOp::divide>)
KCPP_NUMPY_BINARY(make_numpy_maximum, "Maximum", binary<BinaryOp::maximum>)
KCPP_NUMPY_BINARY(make_numpy_minimum, "Minimum", binary<BinaryOp::minimum>)
KCPP_NUMPY_BINARY(make_numpy_not_equal, "NotEqual", ops::not_equal)
KCPP_NUMPY_BINARY(make_numpy_logical_or, "LogicalOr", logical_or)
KCPP_NUMPY_BINARY(make_numpy_logical_and, "LogicalAnd", logical_and)
#undef KCPP_NUMPY_BINARY
LayerPtr make_numpy_any(const Json& c) { return std::make_shared<NumpyAny>(c); }
LayerPtr make_convert_to_tensor(const Json& c) { return std::make_shared<ConvertToTensor>(c); }
}  // namespace kerascpp::layers
