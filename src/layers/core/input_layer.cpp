// keras.layers.InputLayer: the entry of a Functional model. Canonical config key: batch_shape.
#include "layers/config_utils.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
namespace {

class InputLayer : public Layer {
 public:
  explicit InputLayer(Json given) : Layer(std::move(given)) {
    batch_shape_ = shape_from_json(require<Json>(config(), "batch_shape"),
                                   "the batch_shape of InputLayer '" + name() + "'");
  }
  std::string class_name() const override { return "InputLayer"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>&) const override { return {batch_shape_}; }
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const CallContext&) const override {
    return inputs;
  }

 private:
  Shape batch_shape_;
};

}  // namespace
LayerPtr make_input_layer(Json c) { return std::make_shared<InputLayer>(std::move(c)); }
}  // namespace kerascpp::layers
