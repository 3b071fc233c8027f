// Op nodes: the keras.ops calls that Keras 3 records in functional graphs (`x[:, -1]` is GetItem,
// `ops.mean(x, axis=1)` is Mean, of module keras.src.ops.numpy) and tf_keras's TFOpLambda /
// SlicingOpLambda (`tf.reduce_mean(x)` is the function "math.reduce_mean"). Their function is a name and
// their arguments are data: the op's config (Keras 3 stores the op's constructor arguments there) and
// its call as saved, the call's tensors replaced by placeholders {"kerascpp_input": i} (config "call",
// io/config_dialect.cpp). A name kerascpp does not know is refused by name.
//
// Each op is an OpDef: its parameters in Python's positional order under one name per parameter
// (Keras 3's; tf_keras's spellings map onto them), a shape function and a compute function over
// Args, which binds the call's positional arguments, its keywords and the op's config by name:
//
//   {"numpy.Mean", "math.reduce_mean|reduce_mean", {"x", "axis", "keepdims"}, {{"input_tensor", "x"}},
//    reduce_shape, [](const Args<Tensor>& a) { return ops::reduce_mean(a.value("x"), a.axes("axis"), ...); }}
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kerascpp/layer.h"
#include "ops/ops.h"

namespace kerascpp::layers::op_nodes {

// One call's arguments by parameter name. T is Tensor when the op runs, Shape when the graph infers
// its output shape: a tensor argument is then its shape, a number a rank-0 shape.
template <class T>
class Args {
 public:
  Args(const Json& bound, const std::vector<T>& inputs, const std::string& who, bool keras3 = false)
      : bound_(bound), inputs_(inputs), who_(who), keras3_(keras3) {}
  // A keras.ops node (else tf_keras's TFOpLambda, or a Lambda's backend function): where the two
  // dialects' defaults differ (take's axis, softmax's axis=None).
  bool keras3() const { return keras3_; }
  bool has(const char* name) const { return bound_.contains(name) && !bound_[name].is_null(); }
  // Whether the call or config gives the argument at all, null included (Keras 3's axis=None).
  bool given(const char* name) const { return bound_.contains(name); }
  // A tensor argument, or a number (or nested list of numbers) as a float32 constant.
  T value(const char* name) const { return value_of(at(name), name); }
  // A list of tensors (a single tensor is a list of one).
  std::vector<T> values(const char* name) const {
    const Json& j = at(name);
    std::vector<T> out;
    if (j.is_array() && !j.empty() && !j[0].is_number()) {
      for (const Json& e : j) out.push_back(value_of(e, name));
    } else {
      out.push_back(value_of(j, name));
    }
    return out;
  }
  // A non-tensor argument as JSON (null when absent).
  const Json& json(const char* name) const {
    static const Json kNull;
    return bound_.contains(name) ? bound_[name] : kNull;
  }
  template <typename V>
  V get(const char* name, V fallback) const {
    const Json& j = json(name);
    if (j.is_null()) return fallback;
    check(!is_input(j) && (j.is_primitive() || j.is_array()), name, "a constant");
    if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {  // never narrowed: 2^32 - 1 is not -1
      check(j.is_number_integer(), name, "an integer");
      // JSON keeps a parsed non-negative integer unsigned and a built one signed; either may meet a
      // signed or an unsigned target, so compare by value (std::in_range), never through a cast.
      check(j.is_number_unsigned() ? std::in_range<V>(j.get<uint64_t>()) : std::in_range<V>(j.get<int64_t>()), name,
            "an integer in range");
    }
    try {
      return j.get<V>();
    } catch (const Json::exception&) {
      fail(name, "of another type");
    }
  }
  // An axis argument: null (every axis: empty), an int or a list of ints.
  std::vector<int> axes(const char* name) const {
    const Json& j = json(name);
    if (j.is_null()) return {};
    if (j.is_number_integer()) return {get<int>(name, 0)};
    std::vector<int> out;
    check(j.is_array(), name, "an int, a list of ints or None");
    for (const Json& e : j) {
      check(e.is_number_unsigned()  ? std::in_range<int>(e.get<uint64_t>())
            : e.is_number_integer() ? std::in_range<int>(e.get<int64_t>())
                                    : false,
            name, "a list of ints");
      out.push_back(e.get<int>());
    }
    return out;
  }
  // An argument of integers (a shape, multiples: an int, a list, or a tensor or list holding tensors
  // that the graph computes, as tf.shape(x)[0]), flattened: at run time every value (truncated); in
  // shape inference kComputed where a tensor's value stands (a rank-1 tensor of known length: that many).
  std::vector<int64_t> ints(const char* name) const;
  // "Operation 'mean' (keras.src.ops.numpy.Mean)", for messages.
  const std::string& who() const { return who_; }
  [[noreturn]] void fail(const char* name, const std::string& what) const {
    KCPP_THROW(ValueError, who_, ": argument '", name, "' is ", what, ". Received: ", name, "=", json(name).dump().substr(0, 200));
  }
  void check(bool ok, const char* name, const std::string& expected) const {
    if (!ok) fail(name, "not " + expected);
  }

 private:
  static bool is_input(const Json& j) { return j.is_object() && j.contains("kerascpp_input"); }
  const Json& at(const char* name) const {
    KCPP_CHECK(has(name), ValueError, who_, " is missing its argument '", name, "'");
    return bound_[name];
  }
  T value_of(const Json& j, const char* name) const;

  const Json& bound_;
  const std::vector<T>& inputs_;
  const std::string& who_;
  bool keras3_;
};

// In shape inference, an integer argument's entry that a tensor computes (Args::ints).
inline constexpr int64_t kComputed = std::numeric_limits<int64_t>::min();

struct OpDef {
  const char* keras;  // the Keras 3 class with its module under keras.src ("ops.numpy.Mean"), or nullptr
  const char* tf;     // tf_keras function names, '|'-separated ("math.reduce_mean|reduce_mean"), or nullptr
  std::vector<std::string> params;  // positional order; every parameter the op reads
  std::vector<std::pair<std::string, std::string>> tf_names;  // tf_keras's name -> the parameter's
  Shape (*shape)(const Args<Shape>&);
  Tensor (*call)(const Args<Tensor>&);
  // An op with several outputs (split, top_k, moments) gives these instead, shape and call null.
  std::vector<Shape> (*shapes)(const Args<Shape>&) = nullptr;
  std::vector<Tensor> (*calls)(const Args<Tensor>&) = nullptr;
};

// The ops of each family, one file each (elementwise_ops.cpp, ...).
std::vector<OpDef> elementwise_ops();
std::vector<OpDef> reduction_ops();
std::vector<OpDef> array_ops();
std::vector<OpDef> arrangement_ops();
std::vector<OpDef> sorting_ops();
std::vector<OpDef> signal_ops();
std::vector<OpDef> cumulative_ops();
std::vector<OpDef> linalg_ops();
std::vector<OpDef> split_join_ops();
std::vector<OpDef> nn_ops();
std::vector<OpDef> conv_pool_ops();
std::vector<OpDef> numeric_ops();
std::vector<OpDef> image_ops();
std::vector<OpDef> creation_ops();
std::vector<OpDef> padding_ops();        // array_ops_padding.cpp
std::vector<OpDef> decomposition_ops();  // linalg_ops_decomposition.cpp
std::vector<OpDef> factorization_ops();  // linalg_ops_factorizations.cpp
std::vector<OpDef> eigen_ops();          // linalg_ops_eigen.cpp

// Shape functions many ops share: the first tensor's shape; numpy broadcasting of x and y.
Shape same_shape(const Args<Shape>& a);
Shape broadcast_shape(const Args<Shape>& a);
// An axis of a tensor of rank r (negative counts from the end), normalised; ValueError naming the op
// and the argument outside.
template <class T>
int axis_in(const Args<T>& a, const char* name, int axis, int r) {
  if (axis < -r || axis >= r) a.fail(name, "not an axis of the input's " + std::to_string(r) + " dims");
  return axis < 0 ? axis + r : axis;
}
// The axes the argument `axis` names (an int or a list; null: every axis), normalised, sorted and
// distinct; ValueError naming the op otherwise.
template <class T>
std::vector<int> reduced_axes(const Args<T>& a, int rank) {
  std::vector<int> out;
  if (!a.has("axis")) {
    for (int d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  const Json& j = a.json("axis");
  a.check(j.is_number_integer() || j.is_array(), "axis", "an int, a list of ints or None");
  for (int ax : a.axes("axis")) out.push_back(axis_in(a, "axis", ax, rank));
  std::sort(out.begin(), out.end());
  a.check(std::adjacent_find(out.begin(), out.end()) == out.end(), "axis", "a list of distinct axes");
  return out;
}

// Reductions over the argument `axis` with `keepdims` (reduction_ops.cpp): the result's shape; x
// reduced by f(x, axes), which keeps the reduced dims as 1, shaped as the op's result (axis=[]: x);
// max and min with the dims kept.
Shape reduce_shape(const Args<Shape>& a);
using KeptReduction = std::function<Tensor(const Tensor&, const std::vector<int>&)>;
Tensor reduced(const Args<Tensor>& a, const Tensor& x, const KeptReduction& f);
Tensor max_kept(const Tensor& x, const std::vector<int>& axes);
Tensor min_kept(const Tensor& x, const std::vector<int>& axes);

// data_format: Keras's "channels_last" / "channels_first" (null: channels_last), or TensorFlow's
// "NWC", "NHWC", "NDHWC", "NCW", "NCHW", "NCDHW".
template <class T>
bool channels_first(const Args<T>& a) {
  const Json& j = a.json("data_format");
  if (j.is_null()) return false;
  if (!j.is_string()) a.fail("data_format", "a string");
  const std::string s = j.get<std::string>();
  if (s == "channels_last") return false;
  if (s == "channels_first") return true;
  if (!a.keras3() && (s == "NWC" || s == "NHWC" || s == "NDHWC")) return false;
  if (!a.keras3() && (s == "NCW" || s == "NCHW" || s == "NCDHW")) return true;
  a.fail("data_format", a.keras3() ? "\"channels_last\" or \"channels_first\"" : "one of NWC, NHWC, NDHWC, NCW, NCHW, NCDHW");
}

// x broadcast (numpy rules) to `shape`, differentiable: the gradient sums dy back to x's shape.
Tensor broadcast(const Tensor& x, const Shape& shape);

// x cast to the dtype that the op's argument `param` names, its values as Keras's tensor would hold
// them (elementwise_ops.cpp): float16 rounding, integer truncation, bool as 1 / 0.
Tensor cast_to(const Args<Tensor>& a, const Tensor& x, const char* param);
// ValueError naming the op unless the shape has a known rank >= n.
void expect_rank(const Args<Shape>& a, const Shape& s, size_t n, const char* what);

}  // namespace kerascpp::layers::op_nodes
