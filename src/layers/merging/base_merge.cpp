#include "layers/merging/base_merge.h"

#include "layers/plan_parts.h"

namespace kerascpp::layers {

std::vector<Shape> BaseMerge::compute_output_shape(const std::vector<Shape>& in) const {
  KCPP_CHECK(in.size() >= min_inputs() && in.size() <= max_inputs(), ValueError, "A `", class_name(),
             "` layer ('", name(), "') should be called on ",
             (max_inputs() == min_inputs() ? "exactly " : "a list of at least "), min_inputs(),
             " inputs. Received: ", in.size(), " inputs.");
  Shape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    KCPP_CHECK(in[i].size() == out.size(), ValueError, "Inputs of layer '", name(), "' (", class_name(),
               ") must have the same rank. Received: shapes ", shape_str(in[0]), " and ", shape_str(in[i]));
    for (size_t d = 0; d < out.size(); ++d) {
      int64_t a = out[d], b = in[i][d];
      if (a < 0 || b < 0) {
        out[d] = (a == 1) ? b : (b == 1 ? a : (a < 0 ? b : a));
        continue;
      }
      KCPP_CHECK(a == b || a == 1 || b == 1, ValueError, "Inputs of layer '", name(), "' (", class_name(),
                 ") have incompatible shapes. Received: shapes ", shape_str(in[0]), " and ", shape_str(in[i]));
      out[d] = std::max(a, b);
    }
  }
  return {out};
}

Tensor BaseMerge::merge(const std::vector<Tensor>& in) const {
  Tensor y = ops::binary(op(), in[0], in[1]);
  for (size_t i = 2; i < in.size(); ++i) y = ops::binary(op(), y, in[i]);
  return y;
}

std::vector<Tensor> BaseMerge::call(const std::vector<Tensor>& in, const CallContext&) const {
  std::vector<Shape> shapes;
  for (const auto& t : in) shapes.push_back(t.shape());
  compute_output_shape(shapes);  // the same checks as at build time, on the real batch
  return {merge(in)};
}

std::vector<Tensor> BaseMerge::compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>& masks) const {
  // tf_keras: the and of the masks given; Keras 3: none unless every input has one, then their or.
  Tensor merged;
  for (const Tensor& m : masks) {
    if (!m.defined()) {
      if (keras2_semantics()) continue;
      return {Tensor()};
    }
    const ops::BinaryOp combine = keras2_semantics() ? ops::BinaryOp::multiply : ops::BinaryOp::maximum;
    merged = merged.defined() ? ops::binary(combine, merged, m) : m;
  }
  return {merged};
}

bool merge_parts(const Layer& layer, MergeParts* parts) {
  const auto* merge = dynamic_cast<const BaseMerge*>(&layer);
  if (merge) *parts = {merge->merge_op(), merge->averages()};
  return merge != nullptr;
}

}  // namespace kerascpp::layers
