// The keras.ops calls that Keras 3 records as nodes of a functional graph when a model is built
// with them or with operators on Keras tensors (keras/src/ops/numpy.py: Add, Subtract, Multiply,
// Divide, TrueDivide, Maximum, Minimum). MobileNetV3 writes `x + 3.0` and `x * (1 / 6)`, ConvNeXt
// `inputs + x`. Each takes two operands, tensors or numbers, with numpy broadcasting.
//
// Canonical class names carry the Keras module ("keras.src.ops.numpy.Add"), since Add and Multiply
// are also layer names; `call_args` holds the positional arguments with tensors as null
// ([null, 3.0]): both are set by src/io/config_dialect.cpp and undone by config_writer.cpp.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class NumpyBinary : public Layer {
 public:
  NumpyBinary(const Json& config, const char* cls, ops::BinaryOp op) : Layer(config), class_(cls), op_(op) {
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
    return {ops::binary(op_, a, b)};
  }

 private:
  std::string class_;
  ops::BinaryOp op_;
  std::vector<Tensor> constants_;  // per argument: a scalar, or undefined for a tensor
  size_t tensors_ = 0;
};

}  // namespace
using ops::BinaryOp;
#define KCPP_NUMPY_BINARY(factory, cls, op) \
  LayerPtr factory(const Json& c) { return std::make_shared<NumpyBinary>(c, "keras.src.ops.numpy." cls, op); }
KCPP_NUMPY_BINARY(make_numpy_add, "Add", BinaryOp::add)
KCPP_NUMPY_BINARY(make_numpy_subtract, "Subtract", BinaryOp::subtract)
KCPP_NUMPY_BINARY(make_numpy_multiply, "Multiply", BinaryOp::multiply)
KCPP_NUMPY_BINARY(make_numpy_divide, "Divide", BinaryOp::divide)
KCPP_NUMPY_BINARY(make_numpy_true_divide, "TrueDivide", BinaryOp::divide)
KCPP_NUMPY_BINARY(make_numpy_maximum, "Maximum", BinaryOp::maximum)
KCPP_NUMPY_BINARY(make_numpy_minimum, "Minimum", BinaryOp::minimum)
#undef KCPP_NUMPY_BINARY
}  // namespace kerascpp::layers
