// Helpers of the op node tests: op nodes built as io/config_dialect.cpp builds them (a Keras 3 op's
// config with its call's template; a tf_keras TFOpLambda), distinct test values, and each node's
// backward checked against central finite differences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"

namespace kerascpp::op_node_testing {

inline Json in(int i) { return {{"kerascpp_input", i}}; }

// A Keras 3 op node as io/config_dialect.cpp makes it: its config plus its call's template.
inline LayerPtr keras_op(const std::string& cls, Json config, Json args, Json kwargs = Json::object()) {
  config["name"] = "op";
  config["call"] = {{"args", std::move(args)}, {"kwargs", std::move(kwargs)}};
  return make_layer("keras.src.ops." + cls, config);
}
inline LayerPtr tf_op(const std::string& function, Json args, Json kwargs) {
  Json config = {{"name", "tf." + function}, {"function", function}, {"trainable", true}, {"dtype", "float32"}};
  config["call"] = {{"args", std::move(args)}, {"kwargs", std::move(kwargs)}};
  return make_layer(function == "__operators__.getitem" ? "SlicingOpLambda" : "TFOpLambda", config);
}

// Values in +-[0.2, 1.2], all distinct (gaps of 0.01): a step of 1e-3 crosses no kink nor tie.
inline Tensor distinct(std::mt19937& g, const Shape& shape, bool positive = false) {
  Tensor t = Tensor::empty(shape);
  std::vector<float> v(t.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.2f + 0.01f * static_cast<float>(i);
  std::shuffle(v.begin(), v.end(), g);
  std::bernoulli_distribution sign(0.5);
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = positive || !sign(g) ? v[i] : -v[i];
  return t;
}

inline Tensor affine(const Tensor& t, float a, float b) {  // a t + b
  Tensor r = t.copy();
  for (int64_t i = 0; i < r.size(); ++i) r.data<float>()[i] = a * t.data<float>()[i] + b;
  return r;
}

// The node's gradients for all of its inputs, by central differences (relative error over a floor
// of 1e-3: a wrong sign scores 2). Also checks that the inferred shape is the computed one.
inline void expect_gradients(const LayerPtr& op, const std::vector<Tensor>& inputs, double tol = 2e-2) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  const Tensor y = op->call(inputs, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape()) << op->name();
  GradientCheck c = check_gradients([&](const std::vector<Tensor>& x) { return op->call(x, CallContext{})[0]; }, inputs, 1e-3);
  EXPECT_LE(c.max_error, tol) << op->class_name() << " " << op->get_config()["call"].dump() << ": " << c.worst;
}

// Each output of a node with several (split, top_k), checked as expect_gradients checks one.
inline void expect_gradients_of_each(const LayerPtr& op, const std::vector<Tensor>& inputs, double tol = 2e-2) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  const std::vector<Tensor> ys = op->call(inputs, CallContext{});
  const std::vector<Shape> inferred = op->compute_output_shape(shapes);
  ASSERT_EQ(inferred.size(), ys.size()) << op->name();
  for (size_t i = 0; i < ys.size(); ++i) {
    EXPECT_EQ(inferred[i], ys[i].shape()) << op->name() << " output " << i;
    GradientCheck c = check_gradients([&](const std::vector<Tensor>& x) { return op->call(x, CallContext{})[i]; }, inputs, 1e-3);
    EXPECT_LE(c.max_error, tol) << op->class_name() << " output " << i << " " << op->get_config()["call"].dump() << ": " << c.worst;
  }
}

}  // namespace kerascpp::op_node_testing
