// The rest of Keras 3's image augmentation layers (keras/src/layers/preprocessing/image_preprocessing):
// at inference each passes its input through, as Keras does (checked against Keras 3.15 layer by
// layer), so the saved image classifiers that hold them predict. Their training transforms are not
// supported: training refuses by name (ImageAugmentation::augment). Keras's AutoContrast, which
// transforms at inference too, is not in this list.
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {

#define KCPP_INFERENCE_ONLY(factory, cls) \
  LayerPtr factory(const Json& c) { return std::make_shared<ImageAugmentation>(c, cls); }
KCPP_INFERENCE_ONLY(make_random_grayscale, "RandomGrayscale")
KCPP_INFERENCE_ONLY(make_random_hue, "RandomHue")
KCPP_INFERENCE_ONLY(make_random_saturation, "RandomSaturation")
KCPP_INFERENCE_ONLY(make_random_sharpness, "RandomSharpness")
KCPP_INFERENCE_ONLY(make_random_shear, "RandomShear")
KCPP_INFERENCE_ONLY(make_random_color_jitter, "RandomColorJitter")
KCPP_INFERENCE_ONLY(make_random_color_degeneration, "RandomColorDegeneration")
KCPP_INFERENCE_ONLY(make_random_posterization, "RandomPosterization")
KCPP_INFERENCE_ONLY(make_random_invert, "RandomInvert")
KCPP_INFERENCE_ONLY(make_random_erasing, "RandomErasing")
KCPP_INFERENCE_ONLY(make_random_gaussian_blur, "RandomGaussianBlur")
KCPP_INFERENCE_ONLY(make_random_elastic_transform, "RandomElasticTransform")
KCPP_INFERENCE_ONLY(make_random_perspective, "RandomPerspective")
KCPP_INFERENCE_ONLY(make_solarization, "Solarization")
KCPP_INFERENCE_ONLY(make_equalization, "Equalization")
KCPP_INFERENCE_ONLY(make_aug_mix, "AugMix")
KCPP_INFERENCE_ONLY(make_rand_augment, "RandAugment")
KCPP_INFERENCE_ONLY(make_cut_mix, "CutMix")
KCPP_INFERENCE_ONLY(make_mix_up, "MixUp")
#undef KCPP_INFERENCE_ONLY

}  // namespace kerascpp::layers
