// keras.layers.RandomFlip(mode): in training each image is flipped with probability 1/2,
// horizontally, vertically, or both at once with one draw (Keras 3's horizontal_and_vertical; tf_keras
// draws each direction on its own).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomFlip : public ImageAugmentation {
 public:
  explicit RandomFlip(const Json& c) : ImageAugmentation(c, "RandomFlip") {
    const std::string mode = get<std::string>(c, "mode", "horizontal_and_vertical");
    KCPP_CHECK(mode == "horizontal" || mode == "vertical" || mode == "horizontal_and_vertical", ValueError,
               "RandomFlip layer '", name(), "' received an invalid mode argument: ", mode);
    horizontal_ = mode != "vertical";
    vertical_ = mode != "horizontal";
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    const Tensor src = x.copy();
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (int64_t n = 0; n < l.images; ++n) {
      const bool flip = u(rng) <= 0.5f;
      const bool h = horizontal_ && flip, v = vertical_ && (keras2_semantics() && horizontal_ ? u(rng) <= 0.5f : flip);
      const float* in = src.data<float>() + n * l.image_stride;
      float* out = x.data<float>() + n * l.image_stride;
      for (int64_t y = 0; y < l.h; ++y)
        for (int64_t c = 0; c < l.w; ++c)
          for (int64_t ch = 0; ch < l.c; ++ch)
            out[y * l.row_stride + c * l.col_stride + ch * l.channel_stride] =
                in[(v ? l.h - 1 - y : y) * l.row_stride + (h ? l.w - 1 - c : c) * l.col_stride + ch * l.channel_stride];
    }
    return x;
  }

 private:
  bool horizontal_, vertical_;
};

}  // namespace
LayerPtr make_random_flip(Json c) { return std::make_shared<RandomFlip>(std::move(c)); }
}  // namespace kerascpp::layers
