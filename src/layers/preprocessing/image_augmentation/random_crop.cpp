// keras.layers.RandomCrop(height, width): in training a (height, width) window at one random offset
// for the whole batch; an image not larger than the window in both dimensions is cropped to the
// window's aspect ratio around its centre and resized (bilinear). At inference tf_keras does the latter
// too; Keras 3 passes the input through unchanged (its transform_images ignores inference), and so
// does kerascpp for a Keras 3 file.
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"
#include "layers/preprocessing/image_preprocessing/image_resize.h"

namespace kerascpp::layers {
namespace {

class RandomCrop : public ImageAugmentation {
 public:
  explicit RandomCrop(const Json& c) : ImageAugmentation(c, "RandomCrop") {
    resize_.height = require<int64_t>(c, "height");
    resize_.width = require<int64_t>(c, "width");
    KCPP_CHECK(resize_.height > 0 && resize_.width > 0, ValueError, "Layer '", name(),
               "' (RandomCrop): height and width must be positive. Received: height=", resize_.height,
               ", width=", resize_.width);
    resize_.aspect = AspectRatio::crop;
    resize_.channels_first = channels_first_;
    resize_.double_box = true;  // smart_resize's box, in Python floats
  }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {resized_image_shape(in[0], resize_, "Layer '" + name() + "' (RandomCrop)")};
  }
  bool identity_at_inference() const override { return false; }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    if (ctx.training || !keras2_semantics()) return ImageAugmentation::call(in, ctx);
    return {image_resize(in[0], resize_, "Layer '" + name() + "' (RandomCrop)")};
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    if (l.h <= resize_.height || l.w <= resize_.width) return image_resize(x, resize_, "Layer '" + name() + "' (RandomCrop)");
    const auto top = std::uniform_int_distribution<int64_t>(0, l.h - resize_.height)(rng);
    const auto left = std::uniform_int_distribution<int64_t>(0, l.w - resize_.width)(rng);
    std::vector<int64_t> begin(x.rank(), 0);
    Shape size = x.shape();
    const int h_axis = x.rank() - 3 + (channels_first_ ? 1 : 0);
    begin[h_axis] = top, begin[h_axis + 1] = left;
    size[h_axis] = resize_.height, size[h_axis + 1] = resize_.width;
    return ops::slice(x, begin, size);
  }

 private:
  ImageResize resize_;
};

}  // namespace
LayerPtr make_random_crop(Json c) { return std::make_shared<RandomCrop>(std::move(c)); }
}  // namespace kerascpp::layers
