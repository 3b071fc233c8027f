// keras.layers.TimeDistributed (keras/src/layers/rnn/time_distributed.py): the wrapped layer applied to
// every time step, (batch, steps, ...) -> (batch, steps, ...'). It runs once on the steps folded into
// the batch, (batch * steps, ...), not once per step. The mask passes through (the wrapped layer does
// not see it). Keras 3 saves the wrapped layer's weights under ".../layer/vars".
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class TimeDistributed : public Layer {
 public:
  explicit TimeDistributed(Json given) : Layer(std::move(given)) {
    const Json spec = config().value("layer", Json());
    KCPP_CHECK(spec.is_object() && spec.contains("class_name") && spec["class_name"].is_string() &&
                   spec.contains("config") && spec["config"].is_object(),
               ValueError, "Layer '", name(), "' (TimeDistributed): `layer` must be a serialized layer. Received: ",
               spec.dump().substr(0, 200));
    layer_ = make_layer(spec["class_name"].get<std::string>(), spec["config"]);
  }
  std::string class_name() const override { return "TimeDistributed"; }
  bool supports_masking() const override { return true; }
  std::vector<Layer*> sublayers() const override { return {layer_.get()}; }
  std::vector<SaveableChildren> saveable_children() const override { return {{"layer", {layer_.get()}, false}}; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(in[0].size() >= 3, ValueError, "Layer '", name(), "' (TimeDistributed) requires an input of rank >= 3 "
               "(batch, time, ...). Received: input_shape=", shape_str(in[0]));
    std::vector<Shape> inner = layer_->compute_output_shape({step_shape(in[0])});
    KCPP_CHECK(inner.size() == 1, NotImplementedError, "Layer '", name(), "' (TimeDistributed) wraps '",
               layer_->name(), "', which has ", inner.size(), " outputs; kerascpp takes one");
    Shape out{in[0][0], in[0][1]};
    out.insert(out.end(), inner[0].begin() + 1, inner[0].end());
    return {out};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    const Tensor& x = in[0];
    compute_output_shape({x.shape()});
    Shape folded{x.dim(0) * x.dim(1)};
    folded.insert(folded.end(), x.shape().begin() + 2, x.shape().end());
    // Keras calls the layer once per step: the same numbers for every per-sample layer, but not for
    // one whose training depends on the batch.
    KCPP_CHECK(!ctx.training || layer_->class_name() != "BatchNormalization", NotImplementedError, "Layer '", name(),
               "' (TimeDistributed) cannot train its BatchNormalization: Keras computes its statistics step by step");
    CallContext inner = ctx;
    inner.masks = nullptr;
    const Tensor y = layer_->call({x.reshape(folded)}, inner)[0];
    Shape out{x.dim(0), x.dim(1)};
    out.insert(out.end(), y.shape().begin() + 1, y.shape().end());
    return {y.reshape(out)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    KCPP_CHECK(!in.empty() && in[0].size() >= 3, ValueError, "Layer '", name(),
               "' (TimeDistributed) requires an input of rank >= 3 (batch, time, ...)");
    layer_->build({step_shape(in[0])});
  }

 private:
  static Shape step_shape(const Shape& s) {
    Shape step{s[0] < 0 || s[1] < 0 ? -1 : s[0] * s[1]};
    step.insert(step.end(), s.begin() + 2, s.end());
    return step;
  }
  LayerPtr layer_;
};

}  // namespace
LayerPtr make_time_distributed(Json c) { return std::make_shared<TimeDistributed>(std::move(c)); }
}  // namespace kerascpp::layers
