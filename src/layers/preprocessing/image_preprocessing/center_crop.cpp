// keras.layers.CenterCrop (keras/src/layers/preprocessing/image_preprocessing/center_crop.py): the
// centred (height, width) window, starting at (h - height) // 2, (w - width) // 2. When the input is
// smaller than the target in either dim, Keras instead calls smart_resize: crop to the target's aspect
// ratio and resize bilinearly to (height, width).
// x: (batch, h, w, c) -> (batch, height, width, c); channels_first (batch, c, h, w); rank 3 unbatched.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/preprocessing/image_preprocessing/image_resize.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {
namespace {

class CenterCrop : public Layer {
 public:
  explicit CenterCrop(Json given) : Layer(std::move(given)) {
    const std::string who = layer_who(name(), "CenterCrop");
    r_.height = require<int64_t>(config(), "height");
    r_.width = require<int64_t>(config(), "width");
    KCPP_CHECK(r_.height > 0 && r_.width > 0, ValueError, "`height` and `width` of ", who,
               " must be positive integers. Received: height=", r_.height, ", width=", r_.width);
    r_.channels_first = channels_first_from(config(), who);
    r_.aspect = AspectRatio::crop;
    r_.double_box = true;
  }
  std::string class_name() const override { return "CenterCrop"; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {resized_image_shape(in[0], r_, layer_who(name(), "CenterCrop"))};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor& x = in[0];
    compute_output_shape({x.shape()});
    const auto [ha, wa] = image_axes(x.rank(), r_.channels_first);
    const int64_t dh = x.dim(ha) - r_.height, dw = x.dim(wa) - r_.width;
    if (dh < 0 || dw < 0) return {image_resize(x, r_, layer_who(name(), "CenterCrop"))};
    std::vector<int64_t> begin(x.rank(), 0);
    Shape size = x.shape();
    begin[ha] = dh / 2;
    begin[wa] = dw / 2;
    size[ha] = r_.height;
    size[wa] = r_.width;
    return {ops::slice(x, begin, size)};
  }

 private:
  ImageResize r_;
};

}  // namespace
LayerPtr make_center_crop(Json c) { return std::make_shared<CenterCrop>(std::move(c)); }
}  // namespace kerascpp::layers
