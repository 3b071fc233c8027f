// Lambda layers: the function comes from the caller (layers::lambda under the function's or the
// layer's name, or for every other Lambda), or is a Keras backend function a Keras 2 file names
// (tf_keras's Lambda(abs)); the code stored in the file never runs. Fixtures by scripts/make_lambda_fixture.py.
#include <gtest/gtest.h>

#include <cmath>

#include "../test_errors.h"
#include "../test_paths.h"
#include "io/npy/npy.h"
#include "kerascpp/kerascpp.h"

namespace kerascpp {
namespace {
using testing::error_of;

// max |a - b| / max |b|: float32 round-off of a small network is ~1e-7 of the output's scale.
double error_of_scale(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double err = 0, scale = 0;
  for (int64_t i = 0; i < b.size(); ++i) {
    err = std::max(err, static_cast<double>(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b.data<float>()[i])));
  }
  return err / std::max(scale, 1e-12);
}

// keras-facenet's scaling(x, scale) and K.l2_normalize(x, axis) on values.
std::vector<Tensor> scaling(const std::vector<Tensor>& x, const Json& a) {
  Tensor y = x[0].copy();
  for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] *= a.at("scale").get<float>();
  return {y};
}
std::vector<Tensor> l2_normalize_rows(const std::vector<Tensor>& x, const Json& a) {
  EXPECT_EQ(a.at("axis"), 1);
  Tensor y = x[0].copy();
  const int64_t rows = y.dim(0), n = y.size() / rows;
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0;
    for (int64_t j = 0; j < n; ++j) ss += y.data<float>()[r * n + j] * y.data<float>()[r * n + j];
    for (int64_t j = 0; j < n; ++j) y.data<float>()[r * n + j] /= std::sqrt(std::max(ss, 1e-12f));
  }
  return {y};
}

TEST(Lambda, BoundCppFunctionsRunTheFacenetPattern) {
  const std::string dir = testing::fixture("lambda_layers/tf_keras/");
  LoadOptions options;
  options.custom_objects = {{"normalize", layers::lambda(l2_normalize_rows)}, {"Lambda", layers::lambda(scaling)}};
  Model m = load_model(dir + "model.h5", options);
  // Lambda(abs) was saved by name: kerascpp computes it without a binding.
  EXPECT_LE(error_of_scale(m.predict({io::read_npy(dir + "x_0.npy")})[0], io::read_npy(dir + "y_0.npy")), 1e-5);
  // Training cannot take gradients through a function on values: refused by name.
  EXPECT_NE(error_of([&] { m.graph().call({io::read_npy(dir + "x_0.npy")}, CallContext{.training = true}); })
                .find("Lambda layer 'Block35_1_ScaleSum' runs a C++ function"),
            std::string::npos);
}

TEST(Lambda, Keras3NamedFunctionsAreBoundByTheirName) {
  // Lambda(keras.ops.abs), Lambda(keras.ops.mean, arguments={"axis": 1}): Keras 3 writes "builtins" as
  // the module of any function, a user's own `mean` too, so the names are the caller's to bind.
  const std::string dir = testing::fixture("lambda_layers/keras3/");
  EXPECT_NE(error_of([&] { load_model(dir + "model.keras"); }).find("whose function 'abs' is Python code"), std::string::npos);
  LoadOptions options;
  options.custom_objects = {
      {"abs", layers::lambda([](const std::vector<Tensor>& x, const Json&) {
         Tensor y = x[0].copy();
         for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] = std::fabs(y.data<float>()[i]);
         return std::vector<Tensor>{y};
       })},
      {"mean", layers::lambda([](const std::vector<Tensor>& x, const Json& a) {  // over axis 1 of (batch, 4, 5)
         EXPECT_EQ(a.at("axis"), 1);
         Tensor y = Tensor::zeros({x[0].dim(0), x[0].dim(2)});
         for (int64_t b = 0; b < x[0].dim(0); ++b)
           for (int64_t s = 0; s < x[0].dim(1); ++s)
             for (int64_t u = 0; u < x[0].dim(2); ++u)
               y.data<float>()[b * x[0].dim(2) + u] += x[0].data<float>()[(b * x[0].dim(1) + s) * x[0].dim(2) + u] / x[0].dim(1);
         return std::vector<Tensor>{y};
       })}};
  for (const char* form : {"model.keras", "model.h5"}) {
    Model m = load_model(dir + form, options);
    EXPECT_LE(error_of_scale(m.predict({io::read_npy(dir + "x_0.npy")})[0], io::read_npy(dir + "y_0.npy")), 1e-5) << form;
  }
}

TEST(Lambda, AnUnboundFunctionIsRefusedWithTheNamesToBindItBy) {
  const std::string file = testing::fixture("lambda_layers/tf_keras/model.h5");
  const std::string e = error_of([&] { load_model(file); });
  EXPECT_NE(e.find("Layer 'Block35_1_ScaleSum' is a Lambda layer, whose function is Python bytecode"), std::string::npos) << e;
  EXPECT_NE(e.find("'Block35_1_ScaleSum' in custom_objects"), std::string::npos) << e;
  LoadOptions only_scaling;
  only_scaling.custom_objects = {{"Block35_1_ScaleSum", layers::lambda(scaling)}, {"Block17_1_ScaleSum", layers::lambda(scaling)}};
  EXPECT_NE(error_of([&] { load_model(file, only_scaling); }).find("Layer 'normalize' is a Lambda layer"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp
