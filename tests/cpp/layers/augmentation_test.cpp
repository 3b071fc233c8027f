// Image augmentation layers: identity at inference (the fixture image_augmentation checks whole models
// against Keras); in training, Keras 3's transform value for value where its random range is collapsed
// to one value (scripts/make_augmentation_fixture.py), and the distribution of the draws otherwise.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "../test_errors.h"
#include "../test_paths.h"
#include "io/npy/npy.h"
#include "kerascpp/kerascpp.h"

namespace kerascpp {
namespace {
using testing::error_of;

std::vector<Tensor> run(const Layer& l, const Tensor& x, bool training, uint64_t seed = 1) {
  CallContext ctx;
  ctx.training = training;
  ctx.seed = seed;
  return l.call({x}, ctx);
}

LayerPtr layer(const std::string& cls, Json config) {
  config["name"] = "augment";
  return make_layer(cls, config);
}

// Images whose pixels are all distinct: a flip or a crop is recognisable.
Tensor ramp(const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i % 251) + 0.25f * static_cast<float>(i / 251);
  return t;
}

TEST(Augmentation, TrainingTransformsMatchKeras3) {
  const std::string dir = testing::fixture("augmentation_training/");
  const Tensor x = io::read_npy(dir + "x.npy");
  int cases = 0;
  for (int i = 0; std::filesystem::exists(dir + "case_" + std::to_string(i) + ".json"); ++i, ++cases) {
    std::ifstream f(dir + "case_" + std::to_string(i) + ".json");
    std::stringstream s;
    s << f.rdbuf();
    Model m = model_from_json(s.str());
    const Tensor y = io::read_npy(dir + "y_" + std::to_string(i) + ".npy");
    const Tensor got = run(m.get_layer("augment"), x, true)[0];
    ASSERT_EQ(got.shape(), y.shape());
    double err = 0;
    for (int64_t k = 0; k < y.size(); ++k) err = std::max(err, std::fabs(double(got.data<float>()[k]) - y.data<float>()[k]));
    // Pixel values up to 255; bilinear weights in float32 move them by round-off (~1e-4).
    EXPECT_LE(err, 1e-3) << m.get_layer("augment").get_config().dump();
    const Tensor same = run(m.get_layer("augment"), x, false)[0];  // inference: the input itself
    EXPECT_EQ(0, std::memcmp(same.raw_data(), x.raw_data(), x.nbytes()));
  }
  EXPECT_EQ(cases, 37);
}

TEST(Augmentation, RandomFlipFlipsHalfTheImagesWhole) {
  const Tensor x = ramp({400, 3, 5, 2});
  const Tensor y = run(*layer("RandomFlip", {{"mode", "horizontal"}}), x, true)[0];
  int flipped = 0;
  for (int64_t n = 0; n < 400; ++n) {
    bool same = true, mirrored = true;
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 5; ++c)
        for (int64_t ch = 0; ch < 2; ++ch) {
          const float v = y.data<float>()[((n * 3 + r) * 5 + c) * 2 + ch];
          same = same && v == x.data<float>()[((n * 3 + r) * 5 + c) * 2 + ch];
          mirrored = mirrored && v == x.data<float>()[((n * 3 + r) * 5 + (4 - c)) * 2 + ch];
        }
    ASSERT_TRUE(same || mirrored) << "image " << n;
    flipped += mirrored;
  }
  EXPECT_NEAR(flipped, 200, 40);  // binomial(400, 1/2): sd 10
  // Another step (seed) flips other images; the same step, the same ones.
  EXPECT_NE(0, std::memcmp(y.raw_data(), run(*layer("RandomFlip", {{"mode", "horizontal"}}), x, true, 2)[0].raw_data(), y.nbytes()));
  EXPECT_EQ(0, std::memcmp(y.raw_data(), run(*layer("RandomFlip", {{"mode", "horizontal"}}), x, true, 1)[0].raw_data(), y.nbytes()));
}

TEST(Augmentation, RandomCropTakesOneWindowOfTheBatch) {
  const Tensor x = ramp({2, 8, 8, 1});
  std::set<std::pair<int, int>> offsets;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Tensor y = run(*layer("RandomCrop", {{"height", 4}, {"width", 4}}), x, true, seed)[0];
    ASSERT_EQ(y.shape(), (Shape{2, 4, 4, 1}));
    const float first = y.data<float>()[0];  // the window's top-left pixel tells its offset
    const int top = static_cast<int>(first) / 8, left = static_cast<int>(first) % 8;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t c = 0; c < 4; ++c)
          ASSERT_EQ(y.data<float>()[(n * 4 + r) * 4 + c], x.data<float>()[(n * 8 + top + r) * 8 + left + c]);
    offsets.insert({top, left});
  }
  EXPECT_GE(offsets.size(), 15u);  // 25 offsets in [0, 4]^2, 60 draws
}

TEST(Augmentation, RandomRangesAreKeras) {
  const Tensor x = Tensor::from_vector({500, 1, 2, 1}, std::vector<float>(1000, 100.f));
  // RandomBrightness(0.2): one delta per image, U(-0.2, 0.2) * 255.
  const Tensor b = run(*layer("RandomBrightness", {{"factor", 0.2}}), x, true)[0];
  double lo = 1e9, hi = -1e9, mean = 0;
  for (int64_t n = 0; n < 500; ++n) {
    const float d = b.data<float>()[2 * n] - 100.f;
    ASSERT_EQ(b.data<float>()[2 * n], b.data<float>()[2 * n + 1]);
    lo = std::min(lo, double(d)), hi = std::max(hi, double(d)), mean += d / 500;
  }
  EXPECT_GE(lo, -51.0001);
  EXPECT_LE(hi, 51.0001);
  EXPECT_LT(lo, -40);
  EXPECT_GT(hi, 40);
  EXPECT_NEAR(mean, 0, 5);  // sd of the mean: 29.4 / sqrt(500) = 1.3
  // RandomContrast((0.2, 0.5)): the deviation from the image's mean scales by U(0.8, 1.5).
  Tensor two = Tensor::from_vector({500, 1, 2, 1}, std::vector<float>(1000, 90.f));
  for (int64_t n = 0; n < 500; ++n) two.data<float>()[2 * n + 1] = 110.f;
  const Tensor c = run(*layer("RandomContrast", {{"factor", {0.2, 0.5}}}), two, true)[0];
  double flo = 1e9, fhi = -1e9;
  for (int64_t n = 0; n < 500; ++n) {
    const double f = (c.data<float>()[2 * n + 1] - c.data<float>()[2 * n]) / 20.0;
    flo = std::min(flo, f), fhi = std::max(fhi, f);
  }
  EXPECT_GE(flo, 0.8 - 1e-5);
  EXPECT_LE(fhi, 1.5 + 1e-5);
  EXPECT_LT(flo, 0.85);
  EXPECT_GT(fhi, 1.45);
}

TEST(Augmentation, EveryLayerPassesThroughAtInference) {
  const Tensor x = ramp({2, 6, 6, 3});
  // Keras requires a factor of these (as it does of RandomRotation and the other affine ones).
  const std::map<std::string, Json> needs = {{"RandomHue", 0.2}, {"RandomSaturation", 0.3}, {"RandomSharpness", 0.3},
                                             {"RandomColorDegeneration", 0.3}, {"RandomPosterization", 4}};
  for (const char* cls : {"RandomFlip", "RandomGrayscale", "RandomHue", "RandomSaturation", "RandomSharpness", "RandomShear",
                          "RandomColorJitter", "RandomColorDegeneration", "RandomPosterization", "RandomInvert",
                          "RandomErasing", "RandomGaussianBlur", "RandomElasticTransform", "RandomPerspective",
                          "Solarization", "Equalization", "AugMix", "RandAugment", "CutMix", "MixUp"}) {
    Json config = Json::object();
    if (auto it = needs.find(cls); it != needs.end()) config["factor"] = it->second;
    const Tensor y = run(*layer(cls, config), x, false)[0];
    EXPECT_EQ(0, std::memcmp(y.raw_data(), x.raw_data(), x.nbytes())) << cls;
  }
  EXPECT_NE(error_of([&] { layer("RandomHue", Json::object()); }).find("factor"), std::string::npos);
  EXPECT_NE(error_of([&] { layer("RandomRotation", {{"factor", 0.2}, {"fill_mode", "mirror"}}); }).find("fill_mode='mirror'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { run(*layer("RandomFlip", Json::object()), Tensor::zeros({4, 5}), true); }).find("rank 3 or 4"),
            std::string::npos);
}

bool equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// AugMix and RandAugment compose the other layers (each checked against Keras above and in
// color_augmentation_test / geometric_augmentation_test): here what the composition itself promises.
TEST(Augmentation, AugMixMixesChainsIntoTheValueRange) {
  const Tensor x = ramp({4, 8, 8, 3});
  // No chain steps: every chain is the image, so the mix is the image itself (clipped to the range).
  const Tensor same = run(*layer("AugMix", {{"chain_depth", 0}}), x, true)[0];
  for (int64_t i = 0; i < x.size(); ++i)  // float32 mixing weights sum to 1 up to round-off (pixels <= 255)
    ASSERT_NEAR(same.data<float>()[i], x.data<float>()[i], 1e-3);
  auto aug_mix = layer("AugMix", {{"value_range", {0, 255}}, {"factor", 0.5}});
  int changed = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Tensor y = run(*aug_mix, x, true, seed)[0];
    EXPECT_TRUE(equal(y, run(*aug_mix, x, true, seed)[0]));  // a step's seed repeats its draws
    for (int64_t i = 0; i < y.size(); ++i) ASSERT_TRUE(y.data<float>()[i] >= 0.f && y.data<float>()[i] <= 255.f);
    changed += !equal(y, x);
  }
  // A step leaves the images unchanged only if all 9 chain steps draw "none" (1/12 each) or only
  // identity draws: far below 1 in 20.
  EXPECT_GE(changed, 18);
  EXPECT_NE(error_of([] { layer("AugMix", {{"factor", 1.5}}); }).find("[0, 1]"), std::string::npos);
}

TEST(Augmentation, RandAugmentAppliesNumOpsLayers) {
  const Tensor x = ramp({4, 8, 8, 3});
  EXPECT_TRUE(equal(run(*layer("RandAugment", {{"num_ops", 0}}), x, true)[0], x));
  auto rand_augment = layer("RandAugment", {{"num_ops", 2}, {"factor", 0.4}});
  int changed = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Tensor y = run(*rand_augment, x, true, seed)[0];
    EXPECT_TRUE(equal(y, run(*rand_augment, x, true, seed)[0]));
    EXPECT_EQ(y.shape(), x.shape());
    changed += !equal(y, x);
  }
  EXPECT_GE(changed, 18);  // every one of the 11 layers changes a ramp image at factor 0.4 but by chance
  EXPECT_TRUE(equal(run(*rand_augment, x, false)[0], x));
  EXPECT_NE(error_of([] { layer("RandAugment", {{"num_ops", -1}}); }).find("num_ops"), std::string::npos);
}

TEST(Preprocessing, LayersKerascppDoesNotRunAreRefusedWithWhy) {
  EXPECT_NE(error_of([] { make_layer("StringLookup", {{"name", "lookup"}}); })
                .find("Layer 'lookup' is a StringLookup layer, which kerascpp does not support: it maps strings"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("HashedCrossing", {{"name", "cross"}}); }).find("crosses feature values as strings"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("Discretization", {{"name", "d"}, {"num_bins", 4}}); }).find("never adapted"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("CategoryEncoding", {{"name", "c"}, {"num_tokens", 3}, {"output_mode", "tf_idf"}}); })
                .find("unknown `output_mode` 'tf_idf'"),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp
