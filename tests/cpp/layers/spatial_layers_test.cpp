// ZeroPadding / Cropping / UpSampling 1D-3D, Resizing, CenterCrop and the global poolings: config
// errors in Keras style (naming the layer and the key), output shapes for both data formats, and a
// few values worked out by hand. Parity with real Keras is in tests/fixtures/all_layers_spatial_*.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "kerascpp/layer.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

Tensor iota(const Shape& s) {
  Tensor t = Tensor::empty(s);
  std::iota(t.data<float>(), t.data<float>() + t.size(), 0.f);
  return t;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.size()}; }

Tensor run(const std::string& cls, Json config, const Tensor& x) {
  config["name"] = "l";
  LayerPtr layer = make_layer(cls, config);
  Shape in = x.shape();
  in[0] = -1;
  layer->build({in});
  Tensor y = layer->call({x}, {})[0];
  Shape want = layer->compute_output_shape({x.shape()})[0];
  EXPECT_EQ(y.shape(), want) << cls << " " << config.dump();
  return y;
}

template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// The message of the ValueError that building `cls` from `config` (and calling it on `shape`) raises.
std::string config_error(const std::string& cls, Json config, const Shape& shape = {}) {
  return error_of<ValueError>([&] {
    config["name"] = "bad";
    LayerPtr l = make_layer(cls, config);
    if (!shape.empty()) l->compute_output_shape({shape});
  });
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ZeroPadding, ShapesAndValuesBothFormats) {
  Tensor x = iota({1, 2, 2, 1});
  Tensor y = run("ZeroPadding2D", {{"padding", Json::array({Json::array({1, 0}), Json::array({0, 2})})}}, x);
  EXPECT_EQ(y.shape(), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(values(y), (std::vector<float>{0, 0, 0, 0, 0, 1, 0, 0, 2, 3, 0, 0}));
  Tensor cf = run("ZeroPadding2D", {{"padding", 1}, {"data_format", "channels_first"}}, iota({2, 3, 4, 5}));
  EXPECT_EQ(cf.shape(), (Shape{2, 3, 6, 7}));
  EXPECT_EQ(run("ZeroPadding1D", {{"padding", Json::array({2, 1})}}, iota({2, 3, 4})).shape(),
            (Shape{2, 6, 4}));
  EXPECT_EQ(
      run("ZeroPadding1D", {{"padding", 1}, {"data_format", "channels_first"}}, iota({2, 3, 4})).shape(),
      (Shape{2, 3, 6}));
  EXPECT_EQ(run("ZeroPadding3D", {{"padding", Json::array({1, 2, 0})}}, iota({1, 2, 2, 2, 3})).shape(),
            (Shape{1, 4, 6, 2, 3}));
  EXPECT_EQ(run("ZeroPadding3D", Json::object(), iota({1, 2, 2, 2, 3})).shape(), (Shape{1, 4, 4, 4, 3}));
}

TEST(Cropping, ShapesAndValuesBothFormats) {
  Tensor x = iota({1, 3, 4, 1});
  Tensor y = run("Cropping2D", {{"cropping", Json::array({Json::array({1, 0}), Json::array({1, 2})})}}, x);
  EXPECT_EQ(values(y), (std::vector<float>{5, 9}));
  Tensor cf = run("Cropping2D", {{"cropping", 1}, {"data_format", "channels_first"}}, iota({2, 3, 4, 5}));
  EXPECT_EQ(cf.shape(), (Shape{2, 3, 2, 3}));
  EXPECT_EQ(values(run("Cropping1D", {{"cropping", Json::array({1, 2})}}, iota({1, 4, 1}))),
            (std::vector<float>{1}));
  EXPECT_EQ(run("Cropping3D", Json::object(), iota({1, 3, 4, 5, 2})).shape(), (Shape{1, 1, 2, 3, 2}));
}

TEST(UpSampling, NearestRepeatsEachElement) {
  EXPECT_EQ(values(run("UpSampling1D", {{"size", 2}}, iota({1, 2, 1}))), (std::vector<float>{0, 0, 1, 1}));
  Tensor y = run("UpSampling2D", {{"size", Json::array({1, 2})}, {"data_format", "channels_first"}},
                 iota({1, 1, 2, 2}));
  EXPECT_EQ(values(y), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(run("UpSampling3D", {{"size", Json::array({2, 1, 3})}}, iota({1, 2, 2, 2, 1})).shape(),
            (Shape{1, 4, 2, 6, 1}));
  // Bilinear is tf.image.resize to (2h, 2w): TF's values for [[1, 2], [3, 4]].
  Tensor x = Tensor::from_vector({1, 2, 2, 1}, {1, 2, 3, 4});
  Tensor b = run("UpSampling2D", {{"interpolation", "bilinear"}}, x);
  std::vector<float> want = {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(values(b)[i], want[i], 1e-6);
}

TEST(GlobalPooling, ShapesAndValues) {
  Tensor x = iota({2, 3, 4});  // (batch, steps, features)
  EXPECT_EQ(values(run("GlobalMaxPooling1D", Json::object(), x)),
            (std::vector<float>{8, 9, 10, 11, 20, 21, 22, 23}));
  EXPECT_EQ(values(run("GlobalAveragePooling1D", {{"data_format", "channels_first"}}, x)),
            (std::vector<float>{1.5, 5.5, 9.5, 13.5, 17.5, 21.5}));
  EXPECT_EQ(run("GlobalAveragePooling2D", {{"keepdims", true}}, iota({2, 3, 4, 5})).shape(),
            (Shape{2, 1, 1, 5}));
  EXPECT_EQ(
      run("GlobalMaxPooling2D", {{"keepdims", true}, {"data_format", "channels_first"}}, iota({2, 3, 4, 5}))
          .shape(),
      (Shape{2, 3, 1, 1}));
  EXPECT_EQ(run("GlobalMaxPooling3D", Json::object(), iota({2, 2, 2, 2, 3})).shape(), (Shape{2, 3}));
  EXPECT_EQ(run("GlobalAveragePooling3D", {{"keepdims", true}, {"data_format", "channels_first"}},
                iota({2, 3, 2, 2, 2}))
                .shape(),
            (Shape{2, 3, 1, 1, 1}));
}

TEST(CenterCropAndResizing, CropsAndResizes) {
  Tensor x = iota({1, 4, 5, 1});
  EXPECT_EQ(values(run("CenterCrop", {{"height", 2}, {"width", 2}}, x)), (std::vector<float>{6, 7, 11, 12}));
  // Smaller than the target: smart_resize (crop to the aspect ratio, then bilinear).
  EXPECT_EQ(run("CenterCrop", {{"height", 6}, {"width", 2}}, x).shape(), (Shape{1, 6, 2, 1}));
  EXPECT_EQ(
      run("CenterCrop", {{"height", 2}, {"width", 3}, {"data_format", "channels_first"}}, iota({1, 2, 4, 5}))
          .shape(),
      (Shape{1, 2, 2, 3}));
  // Same size resize is the identity; unbatched (rank 3) input works as in Keras.
  EXPECT_EQ(values(run("Resizing", {{"height", 4}, {"width", 5}}, x)), values(x));
  EXPECT_EQ(run("Resizing", {{"height", 3}, {"width", 2}, {"interpolation", "nearest"}}, iota({1, 4, 5, 2}))
                .shape(),
            (Shape{1, 3, 2, 2}));
  // pad_to_aspect_ratio, 2x2 image to 2x4: Keras pads int((4 - 2) / 2) = 1 column of fill_value on each
  // side, and the resize is then the identity.
  Tensor p =
      run("Resizing", {{"height", 2}, {"width", 4}, {"pad_to_aspect_ratio", true}, {"fill_value", 9.0}},
          Tensor::from_vector({1, 2, 2, 1}, {1, 2, 3, 4}));
  EXPECT_EQ(values(p), (std::vector<float>{9, 1, 2, 9, 9, 3, 4, 9}));
  // antialias=True: an upsampling bilinear resize is plain bilinear (TF agrees to 2.4e-7); a
  // downsampling one (TF's scale_and_translate) is refused.
  Tensor small = iota({1, 3, 3, 1});
  EXPECT_EQ(values(run("Resizing", {{"height", 6}, {"width", 5}, {"antialias", true}}, small)),
            values(run("Resizing", {{"height", 6}, {"width", 5}}, small)));
  std::string m = error_of<NotImplementedError>([&] {
    run("Resizing", {{"height", 2}, {"width", 5}, {"antialias", true}}, small);
  });
  EXPECT_TRUE(has(m, "antialias") && has(m, "Resizing")) << m;
}

TEST(SpatialConfigErrors, NameTheLayerAndTheKey) {
  std::string m = config_error("ZeroPadding2D", {{"padding", -1}});
  EXPECT_TRUE(has(m, "'bad'") && has(m, "ZeroPadding2D") && has(m, "padding=-1")) << m;
  m = config_error("ZeroPadding3D", {{"padding", Json::array({1, 2})}});
  EXPECT_TRUE(has(m, "ZeroPadding3D") && has(m, "padding=[1,2]")) << m;
  m = config_error("Cropping2D", {{"cropping", Json::array({Json::array({1, -1}), Json::array({0, 0})})}});
  EXPECT_TRUE(has(m, "Cropping2D") && has(m, "negative") && has(m, "cropping=")) << m;
  m = config_error("Cropping2D", {{"cropping", Json::array({2, 0})}}, {-1, 4, 4, 3});
  EXPECT_TRUE(has(m, "'bad'") && has(m, "should be smaller") && has(m, "(None, 4, 4, 3)") &&
              has(m, "cropping=((2, 2), (0, 0))"))
      << m;
  m = config_error("Cropping1D", {{"cropping", Json::array({3, 4})}}, {-1, 7, 3});
  EXPECT_TRUE(has(m, "Cropping1D") && has(m, "should be smaller")) << m;
  m = config_error("UpSampling2D", {{"interpolation", "cubic_spline"}});
  EXPECT_TRUE(has(m, "UpSampling2D") && has(m, "interpolation=\"cubic_spline\"")) << m;
  m = error_of<NotImplementedError>([] {
    make_layer("UpSampling2D", {{"name", "u"}, {"interpolation", "lanczos3"}});
  });
  EXPECT_TRUE(has(m, "'u'") && has(m, "UpSampling2D") && has(m, "lanczos3")) << m;
  m = config_error("UpSampling3D", {{"size", Json::array({2, 0, 2})}});
  EXPECT_TRUE(has(m, "UpSampling3D") && has(m, "size=[2,0,2]")) << m;
  m = config_error("ZeroPadding2D", {{"data_format", "channels_middle"}});
  EXPECT_TRUE(has(m, "ZeroPadding2D") && has(m, "data_format=\"channels_middle\"")) << m;
  m = config_error("GlobalMaxPooling2D", {{"data_format", "NHWC"}});
  EXPECT_TRUE(has(m, "GlobalMaxPooling2D") && has(m, "data_format=\"NHWC\"")) << m;
  m = config_error("Resizing", {{"height", 0}, {"width", 3}});
  EXPECT_TRUE(has(m, "Resizing") && has(m, "height=0")) << m;
  m = config_error("Resizing", {{"height", 2}, {"width", 3}, {"interpolation", "sideways"}});
  EXPECT_TRUE(has(m, "Resizing") && has(m, "interpolation=\"sideways\"")) << m;
  m = config_error(
      "Resizing",
      {{"height", 2}, {"width", 3}, {"crop_to_aspect_ratio", true}, {"pad_to_aspect_ratio", true}});
  EXPECT_TRUE(has(m, "Only one of")) << m;
  m = config_error("Resizing", {{"height", 2}, {"width", 3}, {"fill_mode", "reflect"}});
  EXPECT_TRUE(has(m, "fill_mode=reflect")) << m;
  m = config_error("CenterCrop", {{"height", 2}, {"width", -3}});
  EXPECT_TRUE(has(m, "CenterCrop") && has(m, "width=-3")) << m;
  EXPECT_THROW(make_layer("Resizing", {{"name", "r"}, {"height", 2}}), ValueError);  // width missing
}

TEST(SpatialConfigErrors, WrongInputRank) {
  std::string m = config_error("ZeroPadding2D", Json::object(), {-1, 4, 3});
  EXPECT_TRUE(has(m, "'bad'") && has(m, "expected ndim=4") && has(m, "(None, 4, 3)")) << m;
  m = config_error("GlobalAveragePooling3D", Json::object(), {-1, 4, 3, 2});
  EXPECT_TRUE(has(m, "expected ndim=5")) << m;
  m = config_error("Resizing", {{"height", 2}, {"width", 3}}, {-1, 4});
  EXPECT_TRUE(has(m, "rank 3 or 4")) << m;
}

}  // namespace
}  // namespace kerascpp
