// Reduction op nodes: keras.ops mean / sum / max / min / std / var / any / all / argmax / argmin /
// logsumexp, softmax and normalisation along axes, and tf.math's reduce_* and tf.nn's counterparts.
#include <cmath>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/checks.h"
#include "ops/grad_util.h"

namespace kerascpp::layers::op_nodes {

Shape reduce_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  const std::vector<int> axes = reduced_axes(a, static_cast<int>(x.size()));
  const bool keep = a.get("keepdims", false);
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    const bool r = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (!r) out.push_back(x[d]);
    else if (keep) out.push_back(1);
  }
  return out;
}

Tensor reduced(const Args<Tensor>& a, const Tensor& x, const KeptReduction& f) {
  const std::vector<int> axes = reduced_axes(a, x.rank());
  if (axes.empty()) return x;  // axis=[]: nothing reduced
  const Tensor kept = f(x, axes);
  if (a.get("keepdims", false)) return kept;
  Shape out;
  for (int d = 0; d < x.rank(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) out.push_back(x.dim(d));
  return kept.reshape(out);
}

Tensor max_kept(const Tensor& x, const std::vector<int>& axes) { return ops::reduce_max(x, axes, true); }
Tensor min_kept(const Tensor& x, const std::vector<int>& axes) {
  auto negate = [](const Tensor& t) { return ops::scale_shift(t, -1.f, 0.f); };
  return negate(ops::reduce_max(negate(x), axes, true));
}

namespace {
using ops::BinaryOp;
using ops::UnaryOp;

Tensor variance(const Tensor& x, const std::vector<int>& axes) {
  const Tensor centred = ops::binary(BinaryOp::subtract, x, ops::reduce_mean(x, axes, true));
  return ops::reduce_mean(ops::unary(UnaryOp::square, centred), axes, true);
}

Tensor mean(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) { return ops::reduce_mean(x, axes, true); });
}
Tensor sum(const Args<Tensor>& a) { return reduced(a, a.value("x"), ops::detail::sum_axes); }
Tensor max(const Args<Tensor>& a) {
  if (a.has("initial")) a.fail("initial", "supported by kerascpp");
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) { return ops::reduce_max(x, axes, true); });
}
Tensor min(const Args<Tensor>& a) {
  if (a.has("initial")) a.fail("initial", "supported by kerascpp");
  return reduced(a, a.value("x"), min_kept);
}
Tensor var(const Args<Tensor>& a) { return reduced(a, a.value("x"), variance); }
Tensor std_(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) {
    return ops::unary(UnaryOp::sqrt, variance(x, axes));
  });
}
Tensor any(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) { return ops::any(x, axes, true); });
}
Tensor all(const Args<Tensor>& a) { return reduced(a, ops::as_mask(a.value("x")), min_kept); }  // min over 1 / 0
// log(sum(exp(x))) computed as max + log(sum(exp(x - max))), as Keras does.
Tensor logsumexp(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) {
    Tensor m = ops::reduce_max(x, axes, true).copy();  // a constant shift: off the tape
    for (int64_t i = 0; i < m.size(); ++i)  // an all -inf row sums to log(0) = -inf, as TensorFlow's
      if (!std::isfinite(m.data<float>()[i])) m.data<float>()[i] = 0.f;
    const Tensor s = ops::detail::sum_axes(ops::unary(UnaryOp::exp, ops::binary(BinaryOp::subtract, x, m)), axes);
    return ops::binary(BinaryOp::add, ops::unary(UnaryOp::log, s), m);
  });
}

// argmax / argmin: the index of the first extreme value along one axis (every element, flattened,
// when axis is null), as float32; no gradient. tf.math.argmax's axis defaults to 0 (tf_axis0).
template <bool tf_axis0>
Shape arg_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (!a.has("axis") && !tf_axis0) return a.get("keepdims", false) ? Shape(x.size(), 1) : Shape{};
  if (!a.has("axis")) return Shape(x.begin() + std::min<size_t>(1, x.size()), x.end());
  return reduce_shape(a);
}
template <bool largest, bool tf_axis0>
Tensor arg_extreme(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const bool flat = !a.has("axis") && !tf_axis0;
  const std::vector<int> axes = flat || !a.has("axis") ? std::vector<int>{0} : reduced_axes(a, x.rank());
  if (axes.size() != 1) a.fail("axis", "one axis");
  if (flat) x = x.reshape({x.size()});
  const int axis = axes[0];
  const ops::detail::AxisSplit s = ops::detail::split_axis(x.shape(), axis);
  Shape kept = x.shape();
  kept[axis] = 1;
  Tensor y = Tensor::empty(kept);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const float* p = x.data<float>() + o * s.axis * s.inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < s.axis; ++k)
        if (largest ? p[k * s.inner] > p[best * s.inner] : p[k * s.inner] < p[best * s.inner]) best = k;
      y.data<float>()[o * s.inner + i] = static_cast<float>(best);
    }
  if (a.get("keepdims", false)) return flat ? y.reshape(Shape(a.value("x").rank(), 1)) : y;
  if (flat) return y.reshape({});
  Shape out = x.shape();
  out.erase(out.begin() + axis);
  return y.reshape(out);
}

int one_axis(const Args<Tensor>& a, int fallback) {
  const Json& j = a.json("axis");
  if (j.is_null()) return fallback;
  if (!j.is_number_integer()) a.fail("axis", "one int (kerascpp normalises along one axis)");
  return j.get<int>();
}
// Keras 3's axis=None: over every element (the tensor flattened, and shaped back).
template <Tensor (*f)(const Tensor&, int)>
Tensor along(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (a.given("axis") && !a.has("axis") && a.keras3())
    return f(x.reshape({x.size()}), 0).reshape(x.shape());
  return f(x, one_axis(a, -1));
}
// keras.ops.normalize(order=2): x * min(rsqrt(sum(x^2)), 1 / epsilon) = x / sqrt(max(sum(x^2), epsilon^2)).
Tensor normalize(const Args<Tensor>& a) {
  if (a.get("order", 2) != 2) a.fail("order", "supported by kerascpp other than 2");
  const Tensor x = a.value("x");
  const float eps = a.get("epsilon", 1e-7f);
  // Keras writes its default axis=-1; a null axis is every axis.
  return ops::l2_normalize(x, a.has("axis") || a.given("axis") ? reduced_axes(a, x.rank()) : std::vector<int>{x.rank() - 1},
                           eps * eps);
}
// tf.math.l2_normalize(x, axis=None, epsilon=1e-12): x / sqrt(max(sum(x^2), epsilon)).
Tensor l2_normalize(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  return ops::l2_normalize(x, reduced_axes(a, x.rank()), a.get("epsilon", 1e-12f));
}

const std::vector<std::pair<std::string, std::string>> kTfReduce = {{"input_tensor", "x"}, {"keep_dims", "keepdims"}};
#define REDUCE(keras, tf, fn) OpDef{keras, tf, {"x", "axis", "keepdims"}, kTfReduce, reduce_shape, fn}

}  // namespace

std::vector<OpDef> reduction_ops() {
  return {
      REDUCE("ops.numpy.Mean", "math.reduce_mean|reduce_mean", mean),
      REDUCE("ops.numpy.Sum", "math.reduce_sum|reduce_sum", sum),
      OpDef{"ops.numpy.Max", "math.reduce_max|reduce_max", {"x", "axis", "keepdims", "initial"}, kTfReduce, reduce_shape, max},
      OpDef{"ops.numpy.Min", "math.reduce_min|reduce_min", {"x", "axis", "keepdims", "initial"}, kTfReduce, reduce_shape, min},
      REDUCE("ops.numpy.Var", "math.reduce_variance", var),
      REDUCE("ops.numpy.Std", "math.reduce_std", std_),
      REDUCE("ops.numpy.Any", "math.reduce_any|reduce_any", any),
      REDUCE("ops.numpy.All", "math.reduce_all|reduce_all", all),
      REDUCE("ops.math.Logsumexp", "math.reduce_logsumexp|reduce_logsumexp", logsumexp),
      OpDef{"ops.numpy.Argmax", nullptr, {"x", "axis", "keepdims"}, {}, arg_shape<false>, arg_extreme<true, false>},
      OpDef{"ops.numpy.Argmin", nullptr, {"x", "axis", "keepdims"}, {}, arg_shape<false>, arg_extreme<false, false>},
      OpDef{nullptr, "math.argmax|argmax", {"x", "axis", "output_type"}, {{"input", "x"}}, arg_shape<true>, arg_extreme<true, true>},
      OpDef{nullptr, "math.argmin|argmin", {"x", "axis", "output_type"}, {{"input", "x"}}, arg_shape<true>, arg_extreme<false, true>},
      OpDef{"ops.nn.Softmax", "nn.softmax|math.softmax", {"x", "axis"}, {{"logits", "x"}}, same_shape, along<ops::softmax>},
      OpDef{"ops.nn.LogSoftmax", "nn.log_softmax|math.log_softmax", {"x", "axis"}, {{"logits", "x"}}, same_shape,
            along<ops::log_softmax>},
      OpDef{"ops.nn.Normalize", nullptr, {"x", "axis", "order", "epsilon"}, {}, same_shape, normalize},
      OpDef{nullptr, "math.l2_normalize|nn.l2_normalize|linalg.l2_normalize", {"x", "axis", "epsilon"}, {}, same_shape, l2_normalize},
  };
}

}  // namespace kerascpp::layers::op_nodes
