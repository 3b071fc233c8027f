// Keras 3's RandomShear, RandomPerspective, RandomErasing, RandomGaussianBlur, RandomElasticTransform,
// Equalization, CutMix and MixUp in training: by property (what each transform leaves, moves or fills)
// and by the distribution of their draws (value for value against Keras, where a random range collapses
// to one value: the fixture augmentation_training, augmentation_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "../test_errors.h"
#include "kerascpp/kerascpp.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {
using testing::error_of;

Tensor run(const Layer& l, const Tensor& x, bool training, uint64_t seed = 1) {
  CallContext ctx;
  ctx.training = training;
  ctx.seed = seed;
  return l.call({x}, ctx)[0];
}
LayerPtr layer(const std::string& cls, Json config) {
  config["name"] = "augment";
  return make_layer(cls, config);
}
Tensor filled(const Shape& shape, float (*f)(int64_t n, int64_t y, int64_t x, int64_t ch)) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t ch = i % shape[3], x = i / shape[3] % shape[2], y = i / (shape[3] * shape[2]) % shape[1];
    t.data<float>()[i] = f(i / (shape[1] * shape[2] * shape[3]), y, x, ch);
  }
  return t;
}
float at(const Tensor& t, int64_t n, int64_t y, int64_t x, int64_t ch) {
  const Shape& s = t.shape();
  return t.data<float>()[((n * s[1] + y) * s[2] + x) * s[3] + ch];
}
float ramp(int64_t n, int64_t y, int64_t x, int64_t ch) {
  return float((n * 37 + y * 11 + x * 5 + ch * 3) % 251) + 2.5f;
}
Tensor to_channels_first(const Tensor& x) { return ops::transpose(x, {0, 3, 1, 2}); }

const char* kClasses[] = {"RandomShear", "RandomPerspective", "RandomErasing", "RandomGaussianBlur",
                          "RandomElasticTransform", "Equalization", "CutMix", "MixUp"};

TEST(GeometricAugmentation, InferencePassesThroughAndTrainingRepeatsPerSeed) {
  const Tensor x = filled({4, 9, 8, 3}, ramp);
  for (const char* cls : kClasses) {
    Json c = std::string(cls) == "RandomShear" ? Json{{"x_factor", 0.3}, {"y_factor", 0.2}} : Json::object();
    const LayerPtr l = layer(cls, c);
    EXPECT_EQ(0, std::memcmp(run(*l, x, false).raw_data(), x.raw_data(), x.nbytes())) << cls;
    const Tensor a = run(*l, x, true, 5), b = run(*l, x, true, 5);
    EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.nbytes())) << cls;
    // channels_first reads the same draws: the transposed output (a layout bug would scramble it).
    c["data_format"] = "channels_first";
    const Tensor f = run(*layer(cls, c), to_channels_first(x), true, 5);
    const Tensor want = to_channels_first(a);
    for (int64_t i = 0; i < f.size(); ++i) ASSERT_NEAR(f.data<float>()[i], want.data<float>()[i], 1e-3) << cls;
  }
}

TEST(GeometricAugmentation, RandomShearShiftsEachRowAndFlipsItsSignHalfTheTime) {
  const Tensor x = filled({200, 6, 12, 1}, ramp);
  EXPECT_EQ(0, std::memcmp(run(*layer("RandomShear", Json::object()), x, true).raw_data(), x.raw_data(), x.nbytes()));
  const Tensor y = run(*layer("RandomShear", {{"x_factor", {0.5, 0.5}}, {"fill_mode", "constant"}, {"fill_value", -1}}),
                       x, true);
  int negative = 0;
  for (int64_t n = 0; n < 200; ++n) {
    bool plus = true, minus = true;  // output (c, r) reads input (c + s r, r), s = +-0.5: even rows are whole shifts
    for (int64_t r = 0; r < 6; r += 2)
      for (int64_t c = 0; c < 12; ++c) {
        const auto want = [&](int64_t s) { return c + s < 0 || c + s >= 12 ? -1.f : at(x, n, r, c + s, 0); };
        plus = plus && at(y, n, r, c, 0) == want(r / 2);
        minus = minus && at(y, n, r, c, 0) == want(-r / 2);
      }
    ASSERT_TRUE(plus || minus) << "image " << n;
    negative += minus;
  }
  EXPECT_NEAR(negative, 100, 30);  // binomial(200, 1/2): sd 7
}

TEST(GeometricAugmentation, RandomPerspectiveKeepsTheOriginCornerAndAppliesWithProbabilityUFactor) {
  const Tensor x = filled({400, 7, 9, 1}, ramp);
  const Tensor same = run(*layer("RandomPerspective", {{"factor", {1, 1}}, {"scale", 0}}), x, true);
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_NEAR(same.data<float>()[i], x.data<float>()[i], 1e-3);
  const Tensor y = run(*layer("RandomPerspective", {{"factor", 0.5}, {"fill_value", 0}}), x, true);
  int changed = 0;
  for (int64_t n = 0; n < 400; ++n) {
    EXPECT_NEAR(at(y, n, 0, 0, 0), at(x, n, 0, 0, 0), 1e-3);  // Keras moves corner * (1 + d): (0, 0) stays
    bool differs = false;
    for (int64_t k = 0; k < 63; ++k)
      differs = differs || std::fabs(at(y, n, k / 9, k % 9, 0) - at(x, n, k / 9, k % 9, 0)) > 1e-3;
    changed += differs;
  }
  EXPECT_NEAR(changed, 100, 35);  // P(U(0, 1) < U(0, 0.5)) = 1/4 of 400: sd 8.7
  EXPECT_NE(error_of([] { layer("RandomPerspective", {{"scale", 1.5}}); }).find("Layer 'augment' (RandomPerspective)"),
            std::string::npos);
}

TEST(GeometricAugmentation, RandomErasingFillsOneBoxPerErasedImage) {
  const Tensor x = filled({400, 10, 10, 3}, [](int64_t, int64_t, int64_t, int64_t) { return 100.f; });
  const Tensor y = run(*layer("RandomErasing", {{"fill_value", {7, 300, -4}}, {"scale", {0.1, 0.5}}}), x, true);
  int erased = 0;
  for (int64_t n = 0; n < 400; ++n) {
    std::set<int64_t> rows, cols;
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t c = 0; c < 10; ++c)
        if (at(y, n, r, c, 0) != 100.f) {
          rows.insert(r), cols.insert(c);
          ASSERT_EQ(at(y, n, r, c, 0), 7.f);
          ASSERT_EQ(at(y, n, r, c, 1), 255.f);  // fill clipped to value_range
          ASSERT_EQ(at(y, n, r, c, 2), 0.f);
        } else {
          ASSERT_EQ(at(y, n, r, c, 1), 100.f);
        }
    if (rows.empty()) continue;
    ++erased;
    // The box: every row of it times every column of it, contiguous, sides of sqrt(U(0.1, 0.5)) * 10.
    for (int64_t r : rows)
      for (int64_t c : cols) ASSERT_EQ(at(y, n, r, c, 0), 7.f);
    ASSERT_EQ(*rows.rbegin() - *rows.begin() + 1, int64_t(rows.size()));
    ASSERT_EQ(*cols.rbegin() - *cols.begin() + 1, int64_t(cols.size()));
    ASSERT_GE(cols.size(), 3u);  // 10 sqrt(0.1) = 3.2 columns at least: 3 or 4 integers
    ASSERT_LE(cols.size(), 8u);  // 10 sqrt(0.5) = 7.1
  }
  EXPECT_NEAR(erased, 200, 40);  // factor 1 is (0, 1): P(U(0, 1) < U(0, 1)) = 1/2; sd 10
  // Default fill: N(0, 1) * 255 clipped to (0, 255), so about half the erased values are 0.
  const Tensor g = run(*layer("RandomErasing", {{"factor", {1, 1}}}), x, true);
  int64_t changed = 0, zeros = 0;
  for (int64_t i = 0; i < g.size(); ++i)
    if (g.data<float>()[i] != 100.f) changed++, zeros += g.data<float>()[i] == 0.f;
  EXPECT_GT(changed, 400 * 300 * 0.02);
  EXPECT_NEAR(double(zeros) / double(changed), 0.5, 0.05);
  EXPECT_NE(error_of([] { layer("RandomErasing", {{"factor", 1.5}}); }).find("(RandomErasing): `factor`"),
            std::string::npos);
  EXPECT_NE(error_of([&] { run(*layer("RandomErasing", {{"fill_value", {1, 2}}}), x, true); }).find("fill_value"),
            std::string::npos);
}

TEST(GeometricAugmentation, RandomGaussianBlurKeepsTheInteriorOfAFlatImageAndDarkensItsZeroPaddedEdge) {
  const Tensor x = filled({2, 8, 8, 2}, [](int64_t, int64_t, int64_t, int64_t) { return 100.f; });
  const Tensor y = run(*layer("RandomGaussianBlur", {{"factor", {1, 1}}, {"sigma", {1, 1}}}), x, true);
  const double a = std::exp(-0.5 / ((1 + 1e-6) * (1 + 1e-6))), edge = (1 + a) / (1 + 2 * a);
  EXPECT_NEAR(at(y, 1, 0, 0, 1), 100 * edge * edge, 1e-3);  // the corner misses a row and a column of weight
  EXPECT_NEAR(at(y, 0, 0, 4, 0), 100 * edge, 1e-3);
  EXPECT_NEAR(at(y, 0, 4, 3, 1), 100, 1e-3);
  // A (5, 3) kernel (Keras reshapes its (3, 5) outer product): still weights summing to 1 inside.
  const Tensor z = run(*layer("RandomGaussianBlur", {{"factor", {1, 1}}, {"kernel_size", {5, 3}}}), x, true);
  for (int64_t r = 2; r < 6; ++r)
    for (int64_t c = 2; c < 6; ++c) EXPECT_NEAR(at(z, 0, r, c, 0), 100, 1e-3);
  // Never blurred (factor 0) but clipped to value_range, as Keras clips every image.
  const Tensor big = filled({1, 3, 3, 1}, [](int64_t, int64_t, int64_t, int64_t) { return 300.f; });
  EXPECT_EQ(run(*layer("RandomGaussianBlur", {{"factor", 0}}), big, true).data<float>()[4], 255.f);
  EXPECT_NE(error_of([] { layer("RandomGaussianBlur", {{"kernel_size", 4}}); }).find("odd"), std::string::npos);
  EXPECT_NE(error_of([] { layer("RandomGaussianBlur", {{"sigma", 2}}); }).find("`sigma`"), std::string::npos);
}

TEST(GeometricAugmentation, RandomElasticTransformMovesPixelsAlongTheDiagonal) {
  // Pixel values encode their position: nearest interpolation, clamped edges, then the source of each
  // output pixel is readable. Keras draws dx and dy from one seed: source - output is (d, d).
  const Tensor x = filled({3, 40, 40, 1}, [](int64_t, int64_t y, int64_t x, int64_t) { return float(y * 64 + x); });
  const Json config = {{"factor", {1, 1}}, {"scale", {1, 1}}, {"value_range", {0, 1e5}}, {"interpolation", "nearest"},
                       {"fill_mode", "nearest"}};
  const Tensor y = run(*layer("RandomElasticTransform", config), x, true);
  int moved = 0;
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t r = 0; r < 40; ++r)
      for (int64_t c = 0; c < 40; ++c) {
        const auto v = int64_t(at(y, n, r, c, 0)), sr = v / 64, sc = v % 64;
        if (sr == 0 || sr == 39 || sc == 0 || sc == 39) continue;  // maybe clamped
        ASSERT_EQ(sr - r, sc - c) << n << " " << r << " " << c;
        moved += sr != r;
      }
  EXPECT_GT(moved, 100);  // alpha 4, noise sd 2 blurred by sigma 2: most pixels move
  // Range or factor (0, 0): Keras returns the input untouched, unclipped.
  const Tensor big = filled({1, 3, 3, 1}, [](int64_t, int64_t, int64_t, int64_t) { return 300.f; });
  EXPECT_EQ(run(*layer("RandomElasticTransform", {{"scale", 0}}), big, true).data<float>()[0], 300.f);
  EXPECT_EQ(run(*layer("RandomElasticTransform", {{"factor", {1, 1}}}), big, true).data<float>()[0], 255.f);
  EXPECT_NE(error_of([&] { run(*layer("RandomElasticTransform", {{"fill_mode", "mirror"}}), big, true); })
                .find("fill_mode='mirror'"),
            std::string::npos);
}

TEST(GeometricAugmentation, EqualizationMapsThroughTheBatchsCumulativeHistogram) {
  // One channel over the whole batch: {10, 20} and {30, 40} -> cdf 1..4, (cdf - 1) * 255 / 3.
  const Tensor x = Tensor::from_vector({2, 1, 2, 2}, {10, 0, 20, 0, 30, 100, 40, 0});
  const Tensor y = run(*layer("Equalization", Json::object()), x, true);
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 8),
            (std::vector<float>{0, 0, 85, 0, 170, 255, 255, 0}));
  // value_range (0, 1): scaled to [0, 255] and back.
  const Tensor u = Tensor::from_vector({1, 2, 2, 1}, {0.1f, 0.2f, 0.2f, 0.9f});
  const Tensor v = run(*layer("Equalization", {{"value_range", {0, 1}}}), u, true);
  EXPECT_NEAR(v.data<float>()[0], 0, 1e-6);
  EXPECT_NEAR(v.data<float>()[1], 170.0 / 255, 1e-6);  // (3 - 1) * 255 / 3
  EXPECT_NEAR(v.data<float>()[3], 1, 1e-6);
  // A dark image spreads over the whole range.
  const auto dark = [](int64_t, int64_t y, int64_t x, int64_t) { return float((y * 16 + x) % 50); };
  const Tensor d = filled({1, 16, 16, 1}, dark);
  const Tensor e = run(*layer("Equalization", Json::object()), d, true);
  EXPECT_EQ(*std::max_element(e.data<float>(), e.data<float>() + e.size()), 255.f);
  EXPECT_NE(error_of([] { layer("Equalization", {{"value_range", 5}}); }).find("value_range"), std::string::npos);
}

// Image n: one-hot at pixel n (so an output shows which images it mixes, and how much).
Tensor one_hots(int64_t n) {
  return filled({n, 20, 20, 1}, [](int64_t i, int64_t y, int64_t x, int64_t) { return y * 20 + x == i ? 1.f : 0.f; });
}

TEST(GeometricAugmentation, MixUpMixesEachImageWithAnotherOfTheBatchByBeta) {
  const Tensor x = one_hots(300);
  // P(0.25 < w < 0.75): 0.173 for Beta(0.2, 0.2), 0.5 for Beta(1, 1) (~299 mixed images: sd <= 0.03), and
  // every w is 0.5 for alpha 0 (TensorFlow floors both gammas at FLT_MIN).
  const std::tuple<double, double, double> cases[] = {{0.2, 0.08, 0.27}, {1.0, 0.4, 0.6}, {0.0, 1.0, 1.0}};
  for (const auto& [alpha, lo, hi] : cases) {
    const Tensor y = run(*layer("MixUp", {{"alpha", alpha}}), x, true);
    std::set<int64_t> partners;
    int mixed = 0, middle = 0;
    for (int64_t n = 0; n < 300; ++n) {
      const float w = y.data<float>()[n * 400 + n];
      double rest = 0;
      for (int64_t p = 0; p < 400; ++p)
        if (p != n && y.data<float>()[n * 400 + p] != 0.f) {
          ASSERT_TRUE(partners.insert(p).second);  // a permutation: nobody mixed in twice
          ASSERT_NEAR(y.data<float>()[n * 400 + p], 1 - w, 1e-6);
          rest += 1;
        }
      ASSERT_LE(rest, 1);
      if (rest == 0) continue;
      ++mixed;
      middle += w > 0.25f && w < 0.75f;
      if (alpha == 0.0) {
        ASSERT_EQ(w, 0.5f);
      }
    }
    EXPECT_GE(double(middle) / mixed, lo) << alpha;
    EXPECT_LE(double(middle) / mixed, hi) << alpha;
  }
}

TEST(GeometricAugmentation, CutMixPastesABoxOfAnotherImage) {
  const Tensor x = filled({200, 10, 10, 2}, [](int64_t n, int64_t, int64_t, int64_t) { return float(n); });
  const Tensor y = run(*layer("CutMix", Json::object()), x, true);
  std::set<float> sources;
  int64_t pasted = 0;
  for (int64_t n = 0; n < 200; ++n) {
    std::set<int64_t> rows, cols;
    float source = float(n);
    int64_t count = 0;
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t c = 0; c < 10; ++c) {
        const float v = at(y, n, r, c, 0);
        ASSERT_EQ(v, at(y, n, r, c, 1));
        if (v == float(n)) continue;
        ASSERT_TRUE(source == float(n) || source == v);  // one other image
        source = v, rows.insert(r), cols.insert(c), ++count;
      }
    pasted += count;
    if (rows.empty()) continue;
    ASSERT_EQ(count, int64_t(rows.size() * cols.size()));  // with the loop below: a full box
    ASSERT_TRUE(sources.insert(source).second);  // a permutation
    for (int64_t r : rows)
      for (int64_t c : cols) ASSERT_EQ(at(y, n, r, c, 0), source);
  }
  // Box area (1 - w) of the image, w ~ Beta(a, a) symmetric: half the pixels on average (sd 0.02 over
  // 200 images, plus the integer grid's rounding).
  EXPECT_NEAR(double(pasted) / (200 * 100), 0.5, 0.08);
  const Tensor one = filled({1, 10, 10, 2}, ramp).reshape({10, 10, 2});
  EXPECT_EQ(0, std::memcmp(run(*layer("CutMix", Json::object()), one, true).raw_data(), one.raw_data(), one.nbytes()));
  EXPECT_NE(error_of([] { layer("CutMix", {{"factor", 1.5}}); }).find("Layer 'augment' (CutMix)"), std::string::npos);
}

TEST(GeometricAugmentation, RandomShearRefusesWhatKerasRefuses) {
  EXPECT_NE(error_of([] { layer("RandomShear", {{"x_factor", 1.5}}); }).find("Layer 'augment' (RandomShear)"),
            std::string::npos);
  EXPECT_NE(error_of([] { layer("RandomShear", {{"y_factor", -0.2}}); }).find("y_factor=-0.2"), std::string::npos);
  EXPECT_EQ(error_of([] { layer("RandomShear", {{"x_factor", {-0.2, 0.2}}}); }), "");  // what Keras saves for 0.2
  EXPECT_NE(error_of([] { layer("RandomShear", {{"fill_mode", "mirror"}}); }).find("fill_mode='mirror'"),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp
