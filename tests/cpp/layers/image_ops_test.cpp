// Image op nodes (keras.ops.image, tf.image through TFOpLambda): each op's backward against central
// finite differences through the node as a graph builds it (which also checks the inferred shape),
// and the errors for arguments kerascpp or Keras refuses. Forward values are checked against Keras by
// the ops_image_* fixtures.
#include <gtest/gtest.h>

#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;

using namespace op_node_testing;  // NOLINT: the helpers of every op node test

const Json kX0 = Json::array({in(0)});

// Hue, saturation, value triples away from hsv_to_rgb's kinks (6 h an integer).
Tensor hsv_pixels() {
  const float h[] = {0.05f, 0.12f, 0.27f, 0.4f, 0.55f, 0.61f, 0.74f, 0.93f};
  std::vector<float> v;
  for (int i = 0; i < 8; ++i) v.insert(v.end(), {h[i], 0.3f + 0.07f * static_cast<float>(i), 0.9f - 0.05f * static_cast<float>(i)});
  return Tensor::from_vector({2, 2, 2, 3}, v);
}

TEST(ImageOps, ColorGradients) {
  std::mt19937 g(5);
  const Tensor rgb = distinct(g, {2, 3, 4, 3}, true), cf = distinct(g, {2, 3, 4, 5}, true);
  expect_gradients(keras_op("image.RGBToGrayscale", Json::object(), kX0), {rgb});
  expect_gradients(keras_op("image.RGBToGrayscale", {{"data_format", "channels_first"}}, kX0), {cf});
  expect_gradients(keras_op("image.RGBToHSV", Json::object(), kX0), {rgb});
  expect_gradients(keras_op("image.RGBToHSV", {{"data_format", "channels_first"}}, kX0), {cf});
  expect_gradients(keras_op("image.HSVToRGB", Json::object(), kX0), {hsv_pixels()});
  expect_gradients(keras_op("image.HSVToRGB", {{"data_format", "channels_first"}}, kX0),
                   {hsv_pixels().reshape({2, 3, 2, 2})});  // any 3-channel image works: the formulas are per pixel
  expect_gradients(tf_op("image.rgb_to_grayscale", kX0, Json::object()), {rgb});
  expect_gradients(tf_op("image.rgb_to_hsv", kX0, Json::object()), {rgb});
  expect_gradients(tf_op("image.hsv_to_rgb", kX0, Json::object()), {hsv_pixels()});
  expect_gradients(tf_op("image.grayscale_to_rgb", kX0, Json::object()), {distinct(g, {2, 3, 4, 1})});
  expect_gradients(tf_op("image.adjust_brightness", kX0, {{"delta", 0.3}}), {rgb});
  expect_gradients(tf_op("image.adjust_contrast", kX0, {{"contrast_factor", 1.7}}), {rgb});
  expect_gradients(tf_op("image.adjust_hue", kX0, {{"delta", 0.2}}), {rgb});
  expect_gradients(tf_op("image.adjust_hue", kX0, {{"delta", -0.3}}), {rgb});  // (no pixel near a sextant edge)
  expect_gradients(tf_op("image.adjust_saturation", kX0, {{"saturation_factor", 0.7}}), {rgb});
  expect_gradients(tf_op("image.adjust_saturation", kX0, {{"saturation_factor", 1.15}}),
                   {distinct(g, {2, 2, 2, 3}, true)});  // S <= 1 - 0.2 / 1.2: scaled, still below the clip at 1
  expect_gradients(tf_op("image.adjust_gamma", kX0, {{"gamma", 1.3}, {"gain", 0.8}}), {rgb});
  expect_gradients(tf_op("image.per_image_standardization", kX0, Json::object()), {distinct(g, {2, 3, 4, 3})});
  // One channel passes through; the result is the input itself.
  const Tensor gray = distinct(g, {2, 3, 4, 1});
  EXPECT_EQ(keras_op("image.RGBToGrayscale", Json::object(), kX0)->call({gray}, CallContext{})[0].data<float>()[5],
            gray.data<float>()[5]);
}

TEST(ImageOps, ResizeGradients) {
  std::mt19937 g(6);
  const Tensor x = distinct(g, {2, 5, 6, 2});
  for (const char* m : {"bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5"}) {
    expect_gradients(keras_op("image.Resize", {{"size", {7, 4}}, {"interpolation", m}}, kX0), {x});
    expect_gradients(keras_op("image.Resize", {{"size", {3, 8}}, {"interpolation", m}, {"antialias", true}}, kX0), {x});
  }
  expect_gradients(keras_op("image.Resize", {{"size", {4, 4}}, {"crop_to_aspect_ratio", true}}, kX0), {x});
  expect_gradients(keras_op("image.Resize", {{"size", {4, 9}}, {"pad_to_aspect_ratio", true}, {"fill_value", 0.5}}, kX0), {x});
  expect_gradients(keras_op("image.Resize", {{"size", {3, 3}}, {"data_format", "channels_first"}, {"interpolation", "area"}}, kX0),
                   {x.reshape({2, 2, 5, 6})});
  expect_gradients(keras_op("image.Resize", {{"size", {3, 4}}}, kX0), {x.reshape({5, 6, 4})});  // one image
  for (const char* m : {"gaussian", "mitchellcubic"})
    expect_gradients(tf_op("image.resize", kX0, {{"size", {4, 9}}, {"method", m}}), {x});
  expect_gradients(tf_op("image.resize_with_pad", kX0, {{"target_height", 4}, {"target_width", 9}}), {x});
  expect_gradients(keras_op("image.ScaleAndTranslate", {{"spatial_dims", {1, 2}}, {"method", "linear"}},
                            {in(0), {nullptr, 4, 3, 2}, {0.7, 0.5}, {0.3, -0.2}}),
                   {x});
  expect_gradients(keras_op("image.ScaleAndTranslate", {{"spatial_dims", {1}}, {"method", "lanczos3"}, {"antialias", false}},
                            {in(0), {2, 8, 6, 2}, {1.5}, {0.5}}),
                   {x});
}

TEST(ImageOps, SamplingGradients) {
  std::mt19937 g(7);
  const Tensor x = distinct(g, {2, 5, 6, 2});
  const Json rot = {0.9, -0.35, 1.3, 0.4, 0.85, -0.9, 0.0, 0.0}, proj = {{1.1, 0.2, -0.7, -0.15, 0.95, 0.6, 0.03, -0.02}};
  for (const char* fill : {"constant", "nearest", "wrap", "reflect"}) {
    expect_gradients(keras_op("image.AffineTransform", {{"fill_mode", fill}, {"fill_value", 0.5}}, {in(0), rot}), {x});
    expect_gradients(keras_op("image.AffineTransform", {{"fill_mode", fill}, {"interpolation", "nearest"}}, {in(0), proj}), {x});
  }
  // One transform per image, channels first.
  expect_gradients(keras_op("image.AffineTransform", {{"data_format", "channels_first"}},
                            {in(0), {{1.0, 0.0, 0.5, 0.0, 1.0, -1.2, 0.0, 0.0}, {0.8, 0.1, 0.0, 0.0, 1.1, 0.3, 0.0, 0.0}}}),
                   {x.reshape({2, 2, 5, 6})});
  expect_gradients(keras_op("image.PerspectiveTransform", Json::object(),
                            {in(0), {{0, 0}, {6, 0}, {0, 5}, {6, 5}}, {{0.5, 0.3}, {5.2, 0.1}, {0.2, 4.6}, {6.3, 5.4}}}),
                   {x});
  // map_coordinates: (5, 6) read at points whose fractions keep off the integers (no kink within the
  // step); some outside, so each fill mode matters. Gradients to the input and the coordinates.
  std::vector<float> c;
  for (int i = 0; i < 24; ++i) c.push_back(static_cast<float>((i * 5) % 8 - 2) + 0.3f + 0.08f * static_cast<float>(i % 5));
  std::vector<float> c_in;  // inside [0, 4): every index read is in range
  for (int i = 0; i < 24; ++i) c_in.push_back(static_cast<float>(i % 4) + 0.3f + 0.08f * static_cast<float>(i % 5));
  const Tensor coords = Tensor::from_vector({2, 3, 4}, c), inside = Tensor::from_vector({2, 3, 4}, c_in), plane = distinct(g, {5, 6});
  for (const char* fill : {"constant", "nearest", "wrap", "mirror", "reflect"}) {
    // Mirror reads index `size` for a coordinate past size - 1 (TensorFlow's gather_nd fails there
    // too): its points stay inside.
    const Tensor at = std::string(fill) == "mirror" ? inside : coords;
    for (int order : {0, 1})
      expect_gradients(keras_op("image.MapCoordinates", {{"order", order}, {"fill_mode", fill}, {"fill_value", 0.4}},
                                Json::array({in(0), in(1)})),
                       {plane, at});
  }
  EXPECT_NE(error_of([&] {
              keras_op("image.MapCoordinates", {{"order", 1}, {"fill_mode", "mirror"}}, Json::array({in(0), in(1)}))
                  ->call({plane, Tensor::from_vector({2, 1}, {4.5f, 0.f})}, CallContext{});
            }).find("fill_mode 'mirror' reads index 5"),
            std::string::npos);
}

TEST(ImageOps, PatchesGradients) {
  std::mt19937 g(8);
  const Tensor small = distinct(g, {1, 4, 5, 2});  // small: each call runs convolutions
  expect_gradients(keras_op("image.ExtractPatches", {{"size", {2, 2}}}, kX0), {small});
  expect_gradients(keras_op("image.ExtractPatches", {{"size", {3, 2}}, {"strides", {2, 1}}, {"padding", "same"}}, kX0), {small});
  expect_gradients(keras_op("image.ExtractPatches", {{"size", {2, 2}}, {"strides", 1}, {"dilation_rate", 2}}, kX0), {small});
  expect_gradients(keras_op("image.ExtractPatches", {{"size", {2, 3}}, {"data_format", "channels_first"}}, kX0),
                   {small.reshape({1, 2, 4, 5})});
  expect_gradients(keras_op("image.ExtractPatches", {{"size", {2, 2, 3}}, {"strides", 1}}, kX0), {small.reshape({1, 2, 2, 5, 2})});
  expect_gradients(tf_op("image.extract_patches", kX0,
                         {{"sizes", {1, 2, 3, 1}}, {"strides", {1, 1, 2, 1}}, {"rates", {1, 2, 1, 1}}, {"padding", "SAME"}}),
                   {small});
}

TEST(ImageOps, PadCropBlurSsimGradients) {
  std::mt19937 g(9);
  const Tensor x = distinct(g, {2, 5, 6, 2}), small = distinct(g, {1, 4, 5, 2});  // small: through convolutions
  expect_gradients(keras_op("image.PadImages", {{"top_padding", 1}, {"left_padding", 2}, {"bottom_padding", 0}, {"right_padding", 3}},
                            kX0),
                   {x});
  expect_gradients(keras_op("image.PadImages", {{"top_padding", 2}, {"target_height", 8}, {"right_padding", 1}, {"target_width", 9},
                                                {"data_format", "channels_first"}},
                            kX0),
                   {x.reshape({2, 2, 5, 6})});
  expect_gradients(keras_op("image.CropImages", {{"top_cropping", 1}, {"left_cropping", 2}, {"bottom_cropping", 1}, {"right_cropping", 0}},
                            kX0),
                   {x});
  expect_gradients(keras_op("image.CropImages", {{"bottom_cropping", 1}, {"target_height", 3}, {"left_cropping", 1}, {"target_width", 4}},
                            kX0),
                   {x});
  expect_gradients(tf_op("image.pad_to_bounding_box", kX0,
                         {{"offset_height", 1}, {"offset_width", 2}, {"target_height", 8}, {"target_width", 9}}),
                   {x});
  expect_gradients(tf_op("image.crop_to_bounding_box", kX0,
                         {{"offset_height", 1}, {"offset_width", 2}, {"target_height", 3}, {"target_width", 3}}),
                   {x});
  expect_gradients(tf_op("image.central_crop", kX0, {{"central_fraction", 0.6}}), {x});
  expect_gradients(keras_op("image.GaussianBlur", Json::object(), kX0), {small});
  expect_gradients(keras_op("image.GaussianBlur", {{"kernel_size", {3, 5}}, {"sigma", {1.0, 0.7}}}, kX0), {small});
  expect_gradients(keras_op("image.GaussianBlur", {{"kernel_size", {4, 2}}, {"sigma", {0.8, 1.5}}, {"data_format", "channels_first"}}, kX0),
                   {small.reshape({1, 2, 4, 5})});
  expect_gradients(keras_op("image.SobelEdges", Json::object(), kX0), {small});
  expect_gradients(keras_op("image.SobelEdges", {{"data_format", "channels_first"}}, kX0), {small.reshape({1, 2, 4, 5})});
  const Tensor p = distinct(g, {1, 4, 4, 1}), y = distinct(g, {1, 4, 4, 1}, true);  // SSIM: five convolutions a call
  expect_gradients(keras_op("image.SSIM", {{"filter_size", 3}}, Json::array({in(0), in(1)})), {p, y});
  expect_gradients(keras_op("image.SSIM", {{"filter_size", 3}, {"max_val", 2.0}, {"data_format", "channels_first"}},
                            Json::array({in(0), in(1)})),
                   {p.reshape({1, 4, 4}), y.reshape({1, 4, 4})});  // one image, channels first
}

TEST(ImageOps, Errors) {
  const Tensor x = Tensor::zeros({2, 5, 6, 3});
  auto err = [&](const LayerPtr& op, std::vector<Tensor> in = {}) {
    return error_of([&] { op->call(in.empty() ? std::vector<Tensor>{x} : in, CallContext{}); });
  };
  auto has = [](const std::string& e, const char* a, const char* b) {
    EXPECT_NE(e.find(a), std::string::npos) << a << " | " << b << " | " << e;
    EXPECT_NE(e.find(b), std::string::npos) << e;
  };
  has(err(keras_op("image.Resize", {{"size", {3, 3}}, {"interpolation", "cubic"}}, kX0)), "image.Resize", "argument 'interpolation'");
  has(err(keras_op("image.Resize", {{"size", {3, 3}}, {"fill_mode", "reflect"}}, kX0)), "image.Resize", "argument 'fill_mode'");
  has(err(keras_op("image.Resize", {{"size", {3}}}, kX0)), "image.Resize", "argument 'size'");
  has(err(tf_op("image.resize", kX0, {{"size", {3, 3}}, {"preserve_aspect_ratio", true}})), "image.resize",
      "argument 'preserve_aspect_ratio'");
  has(err(keras_op("image.AffineTransform", {{"fill_mode", "mirror"}}, {in(0), {1, 0, 0, 0, 1, 0, 0, 0}})), "AffineTransform",
      "argument 'fill_mode'");
  has(err(keras_op("image.AffineTransform", Json::object(), {in(0), {1, 0, 0, 0, 1, 0}})), "AffineTransform", "argument 'transform'");
  has(err(keras_op("image.MapCoordinates", {{"order", 3}}, Json::array({in(0), in(1)})), {x, Tensor::zeros({4, 2})}),
      "MapCoordinates", "argument 'order'");
  has(err(keras_op("image.RGBToHSV", Json::object(), kX0), {Tensor::zeros({2, 5, 6, 4})}), "RGBToHSV", "argument 'images'");
  has(err(keras_op("image.PadImages", {{"top_padding", 1}, {"bottom_padding", 1}, {"target_height", 9}, {"left_padding", 0},
                                      {"right_padding", 0}},
                   kX0)),
      "PadImages", "argument 'target_height'");
  has(err(keras_op("image.CropImages", {{"top_cropping", 4}, {"bottom_cropping", 3}, {"left_cropping", 0}, {"right_cropping", 0}}, kX0)),
      "CropImages", "argument 'target_height'");
  has(err(tf_op("image.extract_patches", kX0, {{"sizes", {2, 2}}, {"strides", {1, 1, 1, 1}}, {"rates", {1, 1, 1, 1}}, {"padding", "VALID"}})),
      "image.extract_patches", "argument 'sizes'");
  has(err(keras_op("image.GaussianBlur", {{"sigma", {0.0, 1.0}}}, kX0)), "GaussianBlur", "argument 'sigma'");
  has(err(keras_op("image.ScaleAndTranslate", {{"spatial_dims", {1, 2}}, {"method", "nearest"}},
                   {in(0), {2, 3, 3, 3}, {0.5, 0.5}, {0.0, 0.0}})),
      "ScaleAndTranslate", "argument 'method'");
  // elastic_transform's noise comes from TensorFlow's random stream: refused when the graph is built.
  has(error_of([&] { keras_op("image.ElasticTransform", {{"seed", 1}}, kX0)->compute_output_shape({{2, 5, 6, 3}}); }),
      "ElasticTransform", "random stream");
}

}  // namespace
}  // namespace kerascpp
