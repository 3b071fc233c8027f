// keras.layers.Resizing (keras/src/layers/preprocessing/image_preprocessing/resizing.py) with Keras 3's
// TensorFlow-backend numbers: tf.image.resize with half-pixel centres, optionally after cropping
// (crop_to_aspect_ratio) or padding with fill_value (pad_to_aspect_ratio) to the target aspect ratio.
// x: (batch, h, w, c) -> (batch, height, width, c); channels_first (batch, c, h, w); rank 3 unbatched.
// tf_keras writes no data_format / pad_to_aspect_ratio / fill_value / antialias: their defaults apply.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/preprocessing/image_preprocessing/image_resize.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {
namespace {

class Resizing : public Layer {
 public:
  explicit Resizing(Json given) : Layer(std::move(given)) {
    const std::string who = layer_who(name(), "Resizing");
    r_.height = require<int64_t>(config(), "height");
    r_.width = require<int64_t>(config(), "width");
    KCPP_CHECK(r_.height > 0 && r_.width > 0, ValueError, "`height` and `width` of ", who,
               " must be positive integers. Received: height=", r_.height, ", width=", r_.width);
    r_.method = resize_method_from(config(), "interpolation", "bilinear", who);
    r_.channels_first = channels_first_from(config(), who);
    const bool crop = get<bool>(config(), "crop_to_aspect_ratio", false);
    const bool pad = get<bool>(config(), "pad_to_aspect_ratio", false);
    KCPP_CHECK(!(crop && pad), ValueError,
               "Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True` in ", who,
               ". Received: crop_to_aspect_ratio=True, pad_to_aspect_ratio=True");
    r_.aspect = crop ? AspectRatio::crop : pad ? AspectRatio::pad : AspectRatio::stretch;
    const std::string fill_mode = get<std::string>(config(), "fill_mode", "constant");
    KCPP_CHECK(fill_mode == "constant", ValueError, "Invalid value for argument `fill_mode` of ", who,
               ". Only `'constant'` is supported. Received: fill_mode=", fill_mode);
    r_.fill_value = get<float>(config(), "fill_value", 0.f);
    // antialias only changes a bilinear / bicubic downsampling; nearest ignores it in TF.
    antialias_ = get<bool>(config(), "antialias", false) && r_.method != ops::ResizeMethod::nearest;
    KCPP_CHECK(!(antialias_ && r_.method == ops::ResizeMethod::bicubic), NotImplementedError,
               "antialias=True with interpolation 'bicubic' is not implemented for ", who);
  }
  std::string class_name() const override { return "Resizing"; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {resized_image_shape(in[0], r_, layer_who(name(), "Resizing"))};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor& x = in[0];
    if (antialias_ && x.rank() >= 3) {
      // Bilinear with antialias equals plain bilinear when no dim shrinks (the triangle filter then
      // has radius one pixel); a shrinking antialiased resize is TF's scale_and_translate, not here.
      const auto [ha, wa] = image_axes(x.rank(), r_.channels_first);
      KCPP_CHECK(x.dim(ha) <= r_.height && x.dim(wa) <= r_.width, NotImplementedError,
                 "antialias=True when downsampling is not implemented for ", layer_who(name(), "Resizing"),
                 ". Received: input shape ", shape_str(x.shape()), " resized to (", r_.height, ", ", r_.width,
                 ")");
    }
    return {image_resize(x, r_, layer_who(name(), "Resizing"))};
  }

 private:
  ImageResize r_;
  bool antialias_ = false;
};

}  // namespace
LayerPtr make_resizing(Json c) { return std::make_shared<Resizing>(std::move(c)); }
}  // namespace kerascpp::layers
