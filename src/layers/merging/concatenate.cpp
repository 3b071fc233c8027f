// keras.layers.Concatenate: joins a list of inputs along `axis` (default -1); other dims must match.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Concatenate : public Layer {
 public:
  explicit Concatenate(Json given) : Layer(std::move(given)), axis_(get<int>(config(), "axis", -1)) {}
  std::string class_name() const override { return "Concatenate"; }
  int axis() const { return axis_; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    KCPP_CHECK(in.size() >= 1, ValueError, "A `Concatenate` layer ('", name(), "') should be called on a list of inputs.");
    int rank = static_cast<int>(in[0].size());
    int axis = ops::normalize_axis(axis_, rank);
    Shape out = in[0];
    for (size_t i = 1; i < in.size(); ++i) {
      bool ok = static_cast<int>(in[i].size()) == rank;
      for (int d = 0; ok && d < rank; ++d)
        if (d != axis && in[i][d] >= 0 && out[d] >= 0 && in[i][d] != out[d]) ok = false;
      KCPP_CHECK(ok, ValueError, "A `Concatenate` layer ('", name(), "') requires inputs with matching shapes except for the concatenation axis. Received: input_shape=",
                 shape_str(in[0]), " and ", shape_str(in[i]));
      out[axis] = (out[axis] < 0 || in[i][axis] < 0) ? -1 : out[axis] + in[i][axis];
      for (int d = 0; d < rank; ++d)
        if (out[d] < 0) out[d] = in[i][d];
    }
    return {out};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::concatenate(in, axis_)};
  }

  // Masks reach Concatenate by propagation only in tf_keras graphs (Keras 3 records the masks of the
  // layers that take one), so tf_keras's rule (tf_keras/src/layers/merging/concatenate.py): each input's
  // mask widened to its input's shape (ones for an input without one), concatenated on the axis, then
  // all() over the last axis.
  std::vector<Tensor> compute_mask(const std::vector<Tensor>& in, const std::vector<Tensor>& masks) const override {
    bool any = false;
    for (const Tensor& m : masks) any = any || m.defined();
    if (!any) return {};
    std::vector<Tensor> full;
    for (size_t i = 0; i < in.size(); ++i) {
      const Tensor ones = Tensor::zeros(in[i].shape());
      Tensor m = ops::scale_shift(ones, 1.f, 1.f);
      if (i < masks.size() && masks[i].defined()) {
        Tensor mi = masks[i];
        if (mi.rank() < in[i].rank()) {
          Shape s = mi.shape();
          s.push_back(1);
          mi = mi.reshape(s);
        }
        m = ops::binary(ops::BinaryOp::multiply, m, mi);
      }
      full.push_back(m);
    }
    const Tensor joined = ops::concatenate(full, axis_);
    if (!keras2_semantics()) return {ops::any(joined, {-1})};  // Keras 3: any over the last axis
    const Tensor none_masked = ops::any(ops::scale_shift(joined, -1.f, 1.f), {-1});
    return {ops::scale_shift(none_masked, -1.f, 1.f)};  // tf_keras: all(m) = not any(not m)
  }

 private:
  int axis_;
};

}  // namespace
LayerPtr make_concatenate(Json c) { return std::make_shared<Concatenate>(std::move(c)); }
bool concatenate_axis(const Layer& layer, int* axis) {
  const auto* c = dynamic_cast<const Concatenate*>(&layer);
  if (c) *axis = c->axis();
  return c != nullptr;
}
}  // namespace kerascpp::layers
