// Keras 3's color augmentation layers in training (RandomGrayscale, RandomHue, RandomSaturation,
// RandomColorDegeneration, RandomColorJitter, RandomInvert, RandomPosterization, Solarization,
// RandomSharpness): by property and by distribution. Their values with a collapsed random range are
// checked against Keras by the augmentation_training fixture (augmentation_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tuple>

#include "../test_errors.h"
#include "kerascpp/kerascpp.h"

namespace kerascpp {
namespace {
using testing::error_of;

Tensor run(const std::string& cls, Json config, const Tensor& x, bool training = true) {
  config["name"] = "augment";
  CallContext ctx;
  ctx.training = training;
  ctx.seed = 1;
  return make_layer(cls, config)->call({x}, ctx)[0];
}

// n images of h x w RGB pixels with values spread over [0, 255) (a fixed pseudo-random pattern).
Tensor pixels(int64_t n, int64_t h = 4, int64_t w = 5, int64_t c = 3) {
  Tensor t = Tensor::empty({n, h, w, c});
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>((i * 37 + i / 7 * 11) % 255) + 0.5f;
  return t;
}
// Every image of x the same pixel.
Tensor fill(int64_t n, std::vector<float> rgb) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.insert(v.end(), rgb.begin(), rgb.end());
  return Tensor::from_vector({n, 1, 1, static_cast<int64_t>(rgb.size())}, v);
}
float at(const Tensor& t, int64_t i) { return t.data<float>()[i]; }
// (n, h, w, c) -> (n, c, h, w)
Tensor channels_first(const Tensor& x) {
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  Tensor t = Tensor::empty({n, c, h, w});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t z = 0; z < w; ++z)
        for (int64_t k = 0; k < c; ++k)
          t.data<float>()[((i * c + k) * h + y) * w + z] = at(x, ((i * h + y) * w + z) * c + k);
  return t;
}

TEST(ColorAugmentation, InferenceIsTheIdentityAndChannelsFirstTransformsAlike) {
  const std::vector<std::pair<std::string, Json>> layers = {
      {"RandomGrayscale", {{"factor", 0.5}}}, {"RandomHue", {{"factor", {0.0, 1.0}}}},
      {"RandomSaturation", {{"factor", {0.2, 0.8}}}}, {"RandomColorDegeneration", {{"factor", {-0.5, 0.5}}}},
      {"RandomColorJitter", {{"brightness_factor", 0.2}, {"contrast_factor", 0.5}, {"saturation_factor", {0.3, 0.6}},
                             {"hue_factor", 0.4}}},
      {"RandomInvert", {{"factor", {0.5, 0.5}}}}, {"RandomPosterization", {{"factor", {1, 8}}}},
      {"Solarization", {{"addition_factor", 0.2}, {"threshold_factor", {0.3, 0.6}}}},
      {"RandomSharpness", {{"factor", {0.0, 1.0}}}}};
  const Tensor x = pixels(16);  // 16 images: a layer that applies with probability 1/2 changes one
  for (const auto& [cls, config] : layers) {
    const Tensor y = run(cls, config, x, false);
    EXPECT_EQ(0, std::memcmp(y.raw_data(), x.raw_data(), x.nbytes())) << cls;
    if (cls == "RandomColorJitter") continue;  // reads channels_first as channels_last, as Keras does
    // The same step draws the same values per image whatever the data_format.
    Json first = config;
    first["data_format"] = "channels_first";
    const Tensor a = channels_first(run(cls, config, x)), b = run(cls, first, channels_first(x));
    ASSERT_EQ(a.shape(), b.shape()) << cls;
    for (int64_t i = 0; i < a.size(); ++i) ASSERT_NEAR(at(a, i), at(b, i), 1e-3) << cls << " at " << i;
    EXPECT_NE(0, std::memcmp(a.raw_data(), channels_first(x).raw_data(), x.nbytes())) << cls << " changed nothing";
  }
  // One image (rank 3) as a batch of one.
  const Tensor one = Tensor::from_vector({1, 2, 3}, {255, 0, 0, 0, 255, 0});
  const Tensor y = run("RandomInvert", {{"factor", {1.0, 1.0}}}, one);
  EXPECT_EQ(y.shape(), one.shape());
  EXPECT_EQ(at(y, 0), 0.f);
  EXPECT_EQ(at(y, 1), 255.f);
}

TEST(ColorAugmentation, RandomInvertInvertsAboutHalfTheImagesWhole) {
  const Tensor x = pixels(400, 2, 3);
  const Tensor y = run("RandomInvert", {{"factor", {0.5, 0.5}}}, x);
  int inverted = 0;
  for (int64_t n = 0; n < 400; ++n) {
    bool same = true, inverse = true;
    for (int64_t i = n * 18; i < (n + 1) * 18; ++i) {
      same = same && at(y, i) == at(x, i);
      inverse = inverse && at(y, i) == 255.f - at(x, i);
    }
    ASSERT_TRUE(same != inverse) << "image " << n;
    inverted += inverse;
  }
  EXPECT_NEAR(inverted, 200, 40);  // binomial(400, 1/2): sd 10, so 4 sd
  // factor (1, 1) always inverts, against value_range's top (as given).
  const Tensor z = run("RandomInvert", {{"factor", {1.0, 1.0}}, {"value_range", {0, 1}}}, fill(3, {0.25f, 1, 0}));
  EXPECT_EQ(at(z, 0), 0.75f);
  EXPECT_EQ(at(z, 8), 1.f);
}

TEST(ColorAugmentation, RandomGrayscaleTurnsImagesGrayWithItsProbability) {
  const Tensor x = pixels(400, 2, 2);
  const Tensor y = run("RandomGrayscale", {{"factor", 0.25}}, x);
  int gray = 0;
  for (int64_t n = 0; n < 400; ++n) {
    bool same = true, is_gray = true;
    for (int64_t p = n * 4; p < (n + 1) * 4; ++p) {
      const float g = 0.2989f * at(x, 3 * p) + 0.5870f * at(x, 3 * p + 1) + 0.1140f * at(x, 3 * p + 2);
      for (int64_t k = 0; k < 3; ++k) {
        same = same && at(y, 3 * p + k) == at(x, 3 * p + k);
        is_gray = is_gray && std::fabs(at(y, 3 * p + k) - g) < 1e-3f;
      }
    }
    ASSERT_TRUE(same != is_gray) << "image " << n;
    gray += is_gray;
  }
  EXPECT_NEAR(gray, 100, 35);  // binomial(400, 1/4): sd 8.7, so 4 sd
  const Tensor one = fill(5, {7.f});  // one channel: gray already
  EXPECT_EQ(0, std::memcmp(run("RandomGrayscale", {{"factor", 1.0}}, one).raw_data(), one.raw_data(), one.nbytes()));
}

TEST(ColorAugmentation, RandomHueTurnsTheHueKeepingValueAndSaturation) {
  const Tensor x = pixels(50);
  const Tensor y = run("RandomHue", {{"factor", {0.0, 1.0}}}, x);
  for (int64_t p = 0; p < x.size() / 3; ++p) {
    auto mx = [&](const Tensor& t) { return std::max({at(t, 3 * p), at(t, 3 * p + 1), at(t, 3 * p + 2)}); };
    auto mn = [&](const Tensor& t) { return std::min({at(t, 3 * p), at(t, 3 * p + 1), at(t, 3 * p + 2)}); };
    ASSERT_NEAR(mx(y), mx(x), 1e-3) << p;  // V
    ASSERT_NEAR(mn(y), mn(x), 1e-3) << p;  // V (1 - S)
  }
  // Pure red (hue 0) turned by +-0.1: hue 0.1 (255, 153, 0) or 0.9 (255, 0, 153), each with probability 1/2.
  const Tensor r = run("RandomHue", {{"factor", {0.2, 0.2}}}, fill(400, {255, 0, 0}));
  int up = 0;
  for (int64_t n = 0; n < 400; ++n) {
    const bool u = std::fabs(at(r, 3 * n + 1) - 153.f) < 1e-2f && at(r, 3 * n + 2) == 0.f;
    const bool d = std::fabs(at(r, 3 * n + 2) - 153.f) < 1e-2f && at(r, 3 * n + 1) == 0.f;
    ASSERT_TRUE(u != d) << n << ": " << at(r, 3 * n + 1) << ", " << at(r, 3 * n + 2);
    up += u;
  }
  EXPECT_NEAR(up, 200, 40);  // binomial(400, 1/2): sd 10
  // factor (1, 1): half a turn either way; red becomes cyan. value_range maps to [0, 1] and back.
  const Tensor c = run("RandomHue", {{"factor", {1.0, 1.0}}, {"value_range", {0, 2}}}, fill(8, {2, 0, 0}));
  for (int64_t n = 0; n < 8; ++n) EXPECT_EQ(at(c, 3 * n) + at(c, 3 * n + 1) + at(c, 3 * n + 2), 4.f);
}

TEST(ColorAugmentation, RandomSaturationScalesSaturation) {
  const Tensor x = pixels(20);
  const Tensor g = run("RandomSaturation", {{"factor", {0.0, 0.0}}}, x);  // k = 0: gray at V
  for (int64_t p = 0; p < x.size() / 3; ++p)
    for (int64_t k = 0; k < 3; ++k)
      ASSERT_EQ(at(g, 3 * p + k), std::max({at(x, 3 * p), at(x, 3 * p + 1), at(x, 3 * p + 2)})) << p;
  const Tensor same = run("RandomSaturation", {{"factor", {0.5, 0.5}}}, x);  // k = 1 - 2e-7
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_NEAR(at(same, i), at(x, i), 1e-3);
  // (200, 100, 100): S = 0.5, so the new min is 200 (1 - 0.5 k), k = f / (1 - f), f ~ U(0.2, 0.8): k in
  // [0.25, 4], past S = 1 when k > 2 (Keras clips S to value_range, not to [0, 1]).
  const Tensor s = run("RandomSaturation", {{"factor", {0.2, 0.8}}}, fill(300, {200, 100, 100}));
  double lo = 1e9, hi = -1e9;
  for (int64_t n = 0; n < 300; ++n) {
    const double k = (1 - at(s, 3 * n + 1) / 200.0) / 0.5;
    lo = std::min(lo, k), hi = std::max(hi, k);
    ASSERT_NEAR(at(s, 3 * n), 200.f, 1e-3);
  }
  EXPECT_GE(lo, 0.25 - 1e-4);
  EXPECT_LE(hi, 4 + 1e-3);
  // f within 0.02 of either end: probability 1/30 each per image, missed by all 300 with (29/30)^300 < 4e-5.
  EXPECT_LT(lo, 0.22 / 0.78);
  EXPECT_GT(hi, 0.78 / 0.22);
}

TEST(ColorAugmentation, RandomColorDegenerationBlendsTowardGray) {
  const Tensor x = pixels(4);
  const Tensor g = run("RandomColorDegeneration", {{"factor", {1.0, 1.0}}}, x);
  for (int64_t p = 0; p < x.size() / 3; ++p)
    for (int64_t k = 0; k < 3; ++k)
      ASSERT_NEAR(at(g, 3 * p + k), 0.2989f * at(x, 3 * p) + 0.5870f * at(x, 3 * p + 1) + 0.1140f * at(x, 3 * p + 2),
                  1e-3);
  // (100, 50, 0): gray 59.235; red moves by f * (gray - 100), f ~ U(-0.5, 0.5) per image.
  const Tensor d = run("RandomColorDegeneration", {{"factor", 0.5}}, fill(300, {100, 50, 0}));
  double lo = 1e9, hi = -1e9;
  for (int64_t n = 0; n < 300; ++n) {
    const double f = (at(d, 3 * n) - 100.0) / (59.235 - 100.0);
    lo = std::min(lo, f), hi = std::max(hi, f);
  }
  EXPECT_GE(lo, -0.5 - 1e-4);
  EXPECT_LE(hi, 0.5 + 1e-4);
  EXPECT_LT(lo, -0.45);  // each end's 0.05: probability 1/20 per image, missed by 300 with (19/20)^300 < 3e-7
  EXPECT_GT(hi, 0.45);
}

TEST(ColorAugmentation, RandomPosterizationKeepsTheHighBits) {
  const Tensor x = pixels(3);
  const Tensor y = run("RandomPosterization", {{"factor", {3, 3}}}, x);  // 3 bits: multiples of 32
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(at(y, i), std::floor(at(x, i) / 32.f) * 32.f) << i;
  // bits ~ randint(1, 8), 8 excluded: 255 becomes 256 - 2^(8 - bits), never 255.
  const Tensor z = run("RandomPosterization", {{"factor", {1, 8}}}, fill(700, {255}));
  std::set<float> seen;
  for (int64_t n = 0; n < 700; ++n) seen.insert(at(z, n));
  // Each of the 7 values has probability 1/7 per image: one missed by all 700 with 7 (6/7)^700 < 1e-45.
  EXPECT_EQ(seen, (std::set<float>{128, 192, 224, 240, 248, 252, 254}));
}

TEST(ColorAugmentation, SolarizationInvertsFromItsThreshold) {
  const Tensor x = pixels(3);
  const Tensor y = run("Solarization", Json::object(), x);  // addition 0, threshold 0: every value inverted
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(at(y, i), 255.f - at(x, i));
  // threshold t ~ U(0.5, 127.5) per image (Keras scales only the upper bound by 255): values below t are
  // kept, the others inverted. Each image holds 0.25, 1.25, ..., 127.25, so t is seen within 1.
  Tensor ramp = Tensor::empty({200, 1, 128, 1});
  for (int64_t i = 0; i < ramp.size(); ++i) ramp.data<float>()[i] = static_cast<float>(i % 128) + 0.25f;
  const Tensor z = run("Solarization", {{"threshold_factor", {0.5, 0.5}}}, ramp);
  double tlo = 1e9, thi = -1e9;
  for (int64_t n = 0; n < 200; ++n) {
    double kept_max = -1, inverted_min = 1e9;
    for (int64_t i = n * 128; i < (n + 1) * 128; ++i) {
      const float v = at(ramp, i);
      if (at(z, i) == v) kept_max = std::max(kept_max, double(v));
      else if (at(z, i) == 255.f - v) inverted_min = std::min(inverted_min, double(v));
      else FAIL() << i;
    }
    ASSERT_LT(kept_max, inverted_min) << n;
    tlo = std::min(tlo, inverted_min), thi = std::max(thi, kept_max);
  }
  // Some t < 10 and some t > 118: probability 9.5 / 127 per image each, all 200 missing one with
  // (1 - 9.5 / 127)^200 < 2e-7.
  EXPECT_LT(tlo, 11);
  EXPECT_GT(thi, 117);
}

TEST(ColorAugmentation, RandomSharpnessBlendsWithTheSmoothedImage) {
  // A constant image of 100 smoothed (factor 0: blend 1): the interior keeps 100 (the kernel sums to 1),
  // a corner sees 4 of its 9 taps (zero padding): 100 (5 + 3) / 13; an edge 6 taps.
  const Tensor c = Tensor::from_vector({1, 3, 3, 1}, std::vector<float>(9, 100.f));
  const Tensor s = run("RandomSharpness", {{"factor", {0.0, 0.0}}}, c);
  EXPECT_NEAR(at(s, 4), 100.f, 1e-4);
  EXPECT_NEAR(at(s, 0), 800.f / 13.f, 1e-4);
  EXPECT_NEAR(at(s, 1), 1000.f / 13.f, 1e-4);
  const Tensor x = pixels(2);
  const Tensor same = run("RandomSharpness", {{"factor", {0.5, 0.5}}}, x);  // blend 0
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(at(same, i), at(x, i));
  // Sharpening (factor 1: blend -1): 2 x - smoothed, clipped to value_range.
  EXPECT_NEAR(at(run("RandomSharpness", {{"factor", {1.0, 1.0}}}, c), 0), 200.f - 800.f / 13.f, 1e-3);
  const Tensor bright = Tensor::from_vector({1, 3, 3, 1}, std::vector<float>(9, 250.f));
  EXPECT_EQ(at(run("RandomSharpness", {{"factor", {1.0, 1.0}}}, bright), 0), 255.f);
}

TEST(ColorAugmentation, RandomColorJitterComposesInKerasOrder) {
  // Brightness (+25.5) before contrast (x2 about the mean): (200, 250) -> (225.5, 255) -> mean 240.25 ->
  // (210.75, 255); the other order would give (200.5, 255).
  const Tensor x = Tensor::from_vector({1, 1, 2, 1}, {200, 250});
  const Tensor y = run("RandomColorJitter", {{"brightness_factor", {0.1, 0.1}}, {"contrast_factor", {-1.0, 1.0}}}, x);
  EXPECT_NEAR(at(y, 0), 210.75f, 1e-3);
  EXPECT_EQ(at(y, 1), 255.f);
  // A number contrast_factor f is Keras 3's (0, f): U(1, 1 + f), never below 1.
  Tensor two = Tensor::from_vector({300, 1, 2, 1}, std::vector<float>(600, 90.f));
  for (int64_t n = 0; n < 300; ++n) two.data<float>()[2 * n + 1] = 110.f;
  const Tensor c = run("RandomColorJitter", {{"contrast_factor", 0.5}}, two);
  double lo = 1e9, hi = -1e9;
  for (int64_t n = 0; n < 300; ++n) {
    const double f = (at(c, 2 * n + 1) - at(c, 2 * n)) / 20.0;
    lo = std::min(lo, f), hi = std::max(hi, f);
  }
  EXPECT_GE(lo, 1 - 1e-5);
  EXPECT_LE(hi, 1.5 + 1e-5);
  EXPECT_LT(lo, 1.05);  // each end's 0.05 of 0.5: probability 1/10 per image, missed by 300 with 0.9^300 < 2e-13
  EXPECT_GT(hi, 1.45);
  // Keras builds the sub-layers without data_format: channels_first input is read as channels_last.
  Json first = {{"brightness_factor", 0.3}, {"contrast_factor", 0.5}, {"data_format", "channels_first"}};
  const Tensor x4 = pixels(3);
  const Tensor cf = run("RandomColorJitter", first, x4);
  first.erase("data_format");
  EXPECT_EQ(0, std::memcmp(cf.raw_data(), run("RandomColorJitter", first, x4).raw_data(), x4.nbytes()));
  // Saturation to 0 then hue: gray stays gray.
  const Tensor g = run("RandomColorJitter", {{"saturation_factor", {0.0, 0.0}}, {"hue_factor", 0.5}}, pixels(2));
  for (int64_t p = 0; p < g.size() / 3; ++p) ASSERT_NEAR(at(g, 3 * p), at(g, 3 * p + 2), 1e-3);
}

TEST(ColorAugmentation, FactorsKerasRefusesAreRefusedByName) {
  const std::vector<std::tuple<std::string, Json, std::string>> refused = {
      {"RandomHue", {{"factor", 1.5}}, "Layer 'augment' (RandomHue): `factor` must be a number in [0, 1]"},
      {"RandomHue", {{"factor", {1.5, 2.0}}}, "(RandomHue): `factor`"},
      {"RandomSaturation", {{"factor", -1.5}}, "(RandomSaturation): `factor`"},
      {"RandomColorDegeneration", {{"factor", {-3.0, -2.0}}}, "(RandomColorDegeneration): `factor`"},
      {"RandomInvert", {{"factor", -0.1}}, "(RandomInvert): `factor`"},
      {"RandomSharpness", {{"factor", 2}}, "(RandomSharpness): `factor`"},
      {"RandomPosterization", {{"factor", 9}}, "(RandomPosterization): `factor`"},
      {"RandomPosterization", {{"factor", {2.5, 4}}}, "(RandomPosterization): `factor` must hold integers"},
      {"RandomGrayscale", {{"factor", {0.1, 0.2}}}, "(RandomGrayscale): `factor` must be a number"},
      {"Solarization", {{"threshold_factor", 1.5}}, "(Solarization): `threshold_factor`"},
      {"RandomColorJitter", {{"hue_factor", 2}}, "(RandomColorJitter): `hue_factor`"},
      // HSV needs RGB: four channels are refused in training.
      {"RandomHue", {{"factor", 0.2}}, "(RandomHue) expects RGB images (3 channels)"}};
  for (const auto& [cls, config, message] : refused)
    EXPECT_NE(error_of([&] { run(cls, config, pixels(1, 2, 2, 4)); }).find(message), std::string::npos) << message;
}

}  // namespace
}  // namespace kerascpp
