// Cumulative, product, nan* and segment op nodes (cumulative_ops*.cpp): each op's backward against
// central finite differences through the node, shapes inferred as computed, the forms no Keras fixture
// holds (over the batch: flattened cumsum, segments of data's first axis, NaN inputs) checked against
// numpy's / TensorFlow's values, and the errors for what kerascpp does not run.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;
using namespace op_node_testing;  // NOLINT: the helpers of every op node test

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const float kMax = std::numeric_limits<float>::max();

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); }
Tensor run(const LayerPtr& op, const std::vector<Tensor>& in) {
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  const Tensor y = op->call(in, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape()) << op->name();
  return y;
}
// NaN-aware equality of values.
void expect_values(const Tensor& t, const std::vector<float>& want, float tol = 1e-5f) {
  const std::vector<float> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
    else EXPECT_NEAR(got[i], want[i], tol * std::max(1.f, std::abs(want[i]))) << "element " << i;
  }
}

const Json x0 = Json::array({in(0)});

TEST(CumulativeOps, KerasGradients) {
  std::mt19937 g(11);
  const Tensor x = distinct(g, {2, 3, 4}), w = distinct(g, {2, 3, 4}, true), w1 = distinct(g, {3}, true);
  for (Json axis : {Json(1), Json(-1), Json(nullptr)}) {
    for (const char* cls : {"numpy.Cumsum", "numpy.Cumprod", "numpy.Nancumsum", "numpy.Nancumprod"})
      expect_gradients(keras_op(cls, {{"axis", axis}, {"dtype", nullptr}}, x0), {x});
  }
  for (const char* cls : {"numpy.Prod", "numpy.Nanprod", "numpy.Ptp", "numpy.Amax", "numpy.Amin", "numpy.Nansum", "numpy.Nanmean",
                          "numpy.Nanvar", "numpy.Nanstd", "numpy.Nanmax", "numpy.Nanmin"}) {
    expect_gradients(keras_op(cls, {{"axis", {1, 2}}, {"keepdims", true}}, x0), {x});
    expect_gradients(keras_op(cls, {{"axis", -1}}, x0), {x});
    expect_gradients(keras_op(cls, Json::object(), x0), {x});
  }
  expect_gradients(keras_op("numpy.NanToNum", {{"nan", 1.0}}, x0), {x});
  expect_gradients(keras_op("numpy.Average", {{"axis", 1}}, x0), {x});
  expect_gradients(keras_op("numpy.Average", {{"axis", nullptr}}, x0), {x});
  expect_gradients(keras_op("numpy.Average", {{"axis", 1}}, x0, {{"weights", in(1)}}), {x, w});
  expect_gradients(keras_op("numpy.Average", {{"axis", -2}}, x0, {{"weights", in(1)}}), {x, w1});
  expect_gradients(keras_op("numpy.Average", {{"axis", nullptr}}, x0, {{"weights", in(1)}}), {x, w});
  expect_gradients(keras_op("numpy.Average", {{"axis", 2}}, x0, {{"weights", {1.0, 2.0, 0.5, 3.0}}}), {x});
  expect_gradients(keras_op("numpy.Diff", {{"n", 2}, {"axis", 1}}, x0), {x});
  expect_gradients(keras_op("numpy.Diff", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Trapezoid", {{"x", nullptr}, {"dx", 0.5}, {"axis", 1}}, x0), {x});
  expect_gradients(keras_op("numpy.Trapezoid", {{"x", {0.0, 1.0, 3.0, 3.5}}, {"dx", 1.0}, {"axis", -1}}, x0), {x});
  expect_gradients(keras_op("numpy.Trapezoid", {{"x", {0.0, 1.0, 3.0}}, {"axis", 1}}, x0), {x});
  const Json ids = {{"class_name", "__numpy__"}, {"config", {{"value", {0, 2, 2}}, {"dtype", "int64"}}}};
  const Tensor d = distinct(g, {3, 4, 2});
  for (const char* cls : {"math.SegmentSum", "math.SegmentMax", "math.SegmentMin", "math.SegmentProd"}) {
    expect_gradients(keras_op(cls, {{"num_segments", 4}, {"sorted", false}}, {in(0), ids}), {d});
    expect_gradients(keras_op(cls, {{"num_segments", nullptr}, {"sorted", true}}, {in(0), ids}), {d});
    expect_gradients(keras_op(cls, {{"num_segments", 3}}, {in(0), in(1)}), {d, Tensor::from_vector({3, 4}, {0, 1, 2, 0, 1, 1, 2, 2, 0, 0, 0, 1})});
  }
}

TEST(CumulativeOps, TensorFlowGradients) {
  std::mt19937 g(12);
  const Tensor x = distinct(g, {2, 3, 4}), d = distinct(g, {5, 3});
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true})
      for (const char* fn : {"math.cumsum", "math.cumprod"})
        expect_gradients(tf_op(fn, x0, {{"axis", 1}, {"exclusive", exclusive}, {"reverse", reverse}}), {x});
  expect_gradients(tf_op("cumsum", x0, Json::object()), {x});  // axis 0
  expect_gradients(tf_op("math.reduce_prod", x0, {{"axis", {0, 2}}, {"keepdims", true}}), {x});
  expect_gradients(tf_op("math.reduce_prod", {in(0), 1}, Json::object()), {x});
  expect_gradients(tf_op("math.reduce_euclidean_norm", x0, {{"axis", -1}}), {x});
  const Json ids = {0, 0, 1, 3, 3};
  for (const char* fn : {"math.segment_sum", "math.segment_max", "math.segment_min", "math.segment_prod", "math.segment_mean"})
    expect_gradients(tf_op(fn, x0, {{"segment_ids", ids}, {"name", nullptr}}), {d});
  const Json unsorted = {2, 0, -1, 2, 0};
  for (const char* fn : {"math.unsorted_segment_sum", "math.unsorted_segment_max", "math.unsorted_segment_min",
                         "math.unsorted_segment_prod", "math.unsorted_segment_mean", "math.unsorted_segment_sqrt_n"})
    expect_gradients(tf_op(fn, x0, {{"segment_ids", unsorted}, {"num_segments", 4}}), {d});
}

// Products with zeros: the gradient is the product of the others, which finite differences see too
// (TensorFlow's cumprod gradient is 0 there; kerascpp's is the derivative).
TEST(CumulativeOps, ProductsWithZeros) {
  const Tensor z = Tensor::from_vector({3, 4}, {2.f, 0.f, 3.f, 0.5f, 0.f, -1.5f, 0.f, 2.f, 1.f, -2.f, 0.5f, 1.5f});
  expect_gradients(keras_op("numpy.Cumprod", {{"axis", 1}}, x0), {z});
  expect_gradients(tf_op("math.cumprod", x0, {{"axis", 1}, {"exclusive", true}, {"reverse", true}}), {z});
  expect_gradients(keras_op("numpy.Prod", {{"axis", 1}}, x0), {z});
  expect_gradients(tf_op("math.unsorted_segment_prod", x0, {{"segment_ids", {1, 0}}, {"num_segments", 2}}),
                   {Tensor::from_vector({2, 4}, {0.f, 0.f, 3.f, 0.5f, 0.f, -1.5f, 0.f, 2.f})});
  // d/dx of sum(cumprod([2, 0, 3, 0.5])): [1 + 0, 2 + 6 + 3, 0, 0] (exactly).
  GradientTape tape;
  Tensor v = Tensor::from_vector({4}, {2.f, 0.f, 3.f, 0.5f});
  tape.watch(v);
  const Tensor y = keras_op("numpy.Cumprod", {{"axis", 0}}, x0)->call({v}, CallContext{})[0];
  EXPECT_EQ(values(tape.gradient(y, {v})[0]), (std::vector<float>{1.f, 11.f, 0.f, 0.f}));
}

// The forms the fixtures cannot hold (they would mix the samples of a batch) and NaN inputs, against
// numpy's / TensorFlow's values.
TEST(CumulativeOps, ValuesAndCorners) {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  // Keras 3's axis=None: over the flattened tensor.
  expect_values(run(keras_op("numpy.Cumsum", {{"axis", nullptr}}, x0), {x}), {1, 3, 6, 10, 15, 21});
  expect_values(run(keras_op("numpy.Cumprod", {{"axis", nullptr}}, x0), {x}), {1, 2, 6, 24, 120, 720});
  expect_values(run(keras_op("numpy.Cumsum", {{"axis", 0}, {"dtype", "int32"}}, x0), {affine(x, 0.5f, 0.f)}), {0, 1, 1, 2, 3, 4});
  expect_values(run(tf_op("math.cumsum", x0, {{"axis", 1}, {"exclusive", true}, {"reverse", true}}), {x}), {5, 3, 0, 11, 6, 0});
  expect_values(run(tf_op("math.cumprod", x0, {{"exclusive", true}}), {x}), {1, 1, 1, 1, 2, 3});  // axis 0
  expect_values(run(keras_op("numpy.Prod", {{"axis", nullptr}}, x0), {x}), {720});
  expect_values(run(keras_op("numpy.Ptp", {{"axis", 0}}, x0), {x}), {3, 3, 3});
  expect_values(run(tf_op("math.reduce_euclidean_norm", x0, {{"axis", 0}}), {x}), {std::sqrt(17.f), std::sqrt(29.f), std::sqrt(45.f)});
  // numpy.diff(x, n=1, axis=0); n=0 is x; n beyond the length leaves an empty axis.
  expect_values(run(keras_op("numpy.Diff", {{"axis", 0}}, x0), {x}), {3, 3, 3});
  expect_values(run(keras_op("numpy.Diff", {{"n", 0}}, x0), {x}), {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run(keras_op("numpy.Diff", {{"n", 4}}, x0), {x}).shape(), (Shape{2, 0}));
  // numpy.trapezoid([[1, 2, 3], [4, 5, 6]], x=[0, 1, 3], axis=1) = [1.5 + 5, 4.5 + 11]; over axis 0: dx * 2.5 ...
  expect_values(run(keras_op("numpy.Trapezoid", {{"x", {0, 1, 3}}, {"axis", 1}}, x0), {x}), {6.5f, 15.5f});
  expect_values(run(keras_op("numpy.Trapezoid", {{"dx", 2.0}, {"axis", 0}}, x0), {x}), {5, 7, 9});
  // numpy.average(x, axis=1, weights=[1, 0, 3]); axis=None with weights of x's shape.
  expect_values(run(keras_op("numpy.Average", {{"axis", 1}}, x0, {{"weights", {1, 0, 3}}}), {x}), {2.5f, 5.5f});
  expect_values(run(keras_op("numpy.Average", {{"axis", nullptr}}, {in(0), in(1)}), {x, x}), {91.f / 21.f});
  expect_values(run(keras_op("numpy.CountNonzero", {{"axis", 1}}, x0), {Tensor::from_vector({2, 3}, {0, 1, kNaN, 0, 0, -2})}), {2, 1});
  expect_values(run(tf_op("math.count_nonzero", x0, {{"keepdims", true}}), {Tensor::from_vector({2, 2}, {0, 1, 3, 0})}), {2});

  // NaN: numpy's nan* functions.
  const Tensor n = Tensor::from_vector({2, 3}, {1, kNaN, 3, kNaN, kNaN, kNaN});
  expect_values(run(keras_op("numpy.Nansum", {{"axis", 1}}, x0), {n}), {4, 0});
  expect_values(run(keras_op("numpy.Nanprod", {{"axis", 1}}, x0), {n}), {3, 1});
  expect_values(run(keras_op("numpy.Nanmean", {{"axis", 1}}, x0), {n}), {2, kNaN});
  expect_values(run(keras_op("numpy.Nanvar", {{"axis", 1}}, x0), {n}), {1, kNaN});
  expect_values(run(keras_op("numpy.Nanstd", {{"axis", 1}, {"keepdims", true}}, x0), {n}), {1, kNaN});
  expect_values(run(keras_op("numpy.Nanmax", {{"axis", 1}}, x0), {n}), {3, kNaN});
  expect_values(run(keras_op("numpy.Nanmin", {{"axis", nullptr}}, x0), {n}), {1});
  expect_values(run(keras_op("numpy.Nanargmax", {{"axis", 1}}, x0), {n}), {2, -1});  // Keras's TF backend: -1
  expect_values(run(keras_op("numpy.Nanargmin", {{"axis", 0}, {"keepdims", true}}, x0), {n}), {0, -1, 0});
  expect_values(run(keras_op("numpy.Nanargmax", {{"axis", nullptr}}, x0), {n}), {2});
  expect_values(run(keras_op("numpy.Nancumsum", {{"axis", 1}}, x0), {n}), {1, 1, 4, 0, 0, 0});
  expect_values(run(keras_op("numpy.Nancumprod", {{"axis", nullptr}}, x0), {n}), {1, 1, 3, 3, 3, 3});
  const Tensor f = Tensor::from_vector({4}, {kNaN, kInf, -kInf, 2});
  expect_values(run(keras_op("numpy.NanToNum", {{"nan", 0.0}, {"posinf", nullptr}, {"neginf", nullptr}}, x0), {f}), {0, kMax, -kMax, 2});
  expect_values(run(keras_op("numpy.NanToNum", {{"nan", 1.5}, {"posinf", 7.0}, {"neginf", -7.0}}, x0), {f}), {1.5f, 7, -7, 2});
  // The gradient of a nan* reduction is 0 where the value is NaN.
  GradientTape tape;
  Tensor v = n.copy();
  tape.watch(v);
  const Tensor s = keras_op("numpy.Nanmean", {{"axis", 1}}, x0)->call({v}, CallContext{})[0];
  const Tensor sum0 = keras_op("numpy.GetItem", Json::object(), {in(0), {0}})->call({s}, CallContext{})[0];
  expect_values(tape.gradient(sum0, {v})[0], {0.5f, 0, 0.5f, 0, 0, 0});

  // Segments (over data's first axis): TensorFlow's values, empty segments included.
  const Tensor d = Tensor::from_vector({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_values(run(tf_op("math.segment_max", x0, {{"segment_ids", {0, 0, 3}}}), {d}), {3, 4, 0, 0, 0, 0, 5, 6});
  expect_values(run(tf_op("math.segment_prod", x0, {{"segment_ids", {0, 0, 3}}}), {d}), {3, 8, 1, 1, 1, 1, 5, 6});
  expect_values(run(tf_op("math.segment_mean", x0, {{"segment_ids", {0, 0, 3}}}), {d}), {2, 3, 0, 0, 0, 0, 5, 6});
  expect_values(run(tf_op("math.unsorted_segment_max", x0, {{"segment_ids", {0, 0, 2}}, {"num_segments", 3}}), {d}),
                {3, 4, -kMax, -kMax, 5, 6});
  expect_values(run(tf_op("math.unsorted_segment_min", x0, {{"segment_ids", {2, -1, 2}}, {"num_segments", 3}}), {d}),
                {kMax, kMax, kMax, kMax, 1, 2});
  expect_values(run(tf_op("math.unsorted_segment_sqrt_n", x0, {{"segment_ids", {1, 1, 0}}, {"num_segments", 2}}), {d}),
                {5, 6, 4 / std::sqrt(2.f), 6 / std::sqrt(2.f)});
  // Keras 3 without num_segments: sorted ids give the largest id + 1 rows; an unsorted sum counts the
  // distinct ids (Keras's TensorFlow backend), the others the largest id + 1.
  expect_values(run(keras_op("math.SegmentSum", {{"sorted", true}}, {in(0), {0, 0, 2}}), {d}), {4, 6, 0, 0, 5, 6});
  expect_values(run(keras_op("math.SegmentSum", {{"sorted", false}}, {in(0), {1, 0, 1}}), {d}), {3, 4, 6, 8});
  expect_values(run(keras_op("math.SegmentMin", {{"sorted", false}}, {in(0), {2, 0, 2}}), {d}), {3, 4, kMax, kMax, 1, 2});
  // N-D ids over data's leading dims (tf.math.unsorted_segment_sum).
  expect_values(run(tf_op("math.unsorted_segment_sum", {in(0), {{0, 1}, {1, 1}, {0, 0}}}, {{"num_segments", 2}}), {d}), {12, 9});
}

TEST(CumulativeOps, ErrorsNameTheOpAndTheArgument) {
  const Tensor t = Tensor::zeros({2, 3, 4});
  auto error = [&](const LayerPtr& op, const std::vector<Tensor>& in) {
    return error_of([&] { op->call(in, CallContext{}); });
  };
  auto shape_error = [&](const LayerPtr& op, const std::vector<Shape>& in) {
    return error_of([&] { op->compute_output_shape(in); });
  };
  auto expect_has = [](const std::string& what, const std::string& part) {
    EXPECT_NE(what.find(part), std::string::npos) << "[" << what << "] lacks [" << part << "]";
  };
  expect_has(error(keras_op("numpy.Cumsum", {{"axis", 3}}, x0), {t}), "(keras.src.ops.numpy.Cumsum): argument 'axis' is not an axis");
  expect_has(shape_error(tf_op("math.cumprod", x0, {{"axis", -4}}), {{2, 3, 4}}), "tf.math.cumprod): argument 'axis' is not an axis");
  expect_has(error(keras_op("numpy.Cumsum", {{"axis", 1}, {"dtype", "float16"}}, x0), {t}), "argument 'dtype'");
  expect_has(shape_error(keras_op("numpy.Prod", {{"axis", {1, 1}}}, x0), {{2, 3, 4}}),
             "(keras.src.ops.numpy.Prod): argument 'axis' is not a list of distinct axes");
  expect_has(shape_error(keras_op("numpy.Nanmax", {{"axis", 5}}, x0), {{2, 3, 4}}), "Nanmax): argument 'axis' is not an axis");
  expect_has(shape_error(keras_op("numpy.Nanargmax", {{"axis", {0, 1}}}, x0), {{2, 3, 4}}), "Nanargmax): argument 'axis' is not one int");
  expect_has(shape_error(keras_op("numpy.Diff", {{"n", -1}}, x0), {{2, 3, 4}}), "Diff): argument 'n' is not a non-negative order");
  expect_has(shape_error(keras_op("numpy.Average", {{"axis", 1}}, x0, {{"weights", in(1)}}), {{2, 3, 4}, {4}}),
             "Average): argument 'weights' is not of the shape of x");
  expect_has(shape_error(keras_op("numpy.Average", {{"axis", {0, 1}}}, x0), {{2, 3, 4}}), "Average): argument 'axis' is not one int");
  expect_has(shape_error(keras_op("numpy.Trapezoid", {{"x", {0, 1}}, {"axis", -1}}, x0), {{2, 3, 4}}), "Trapezoid): argument 'x'");
  expect_has(shape_error(keras_op("numpy.Trapezoid", {{"axis", nullptr}}, x0), {{2, 3, 4}}), "Trapezoid): argument 'axis' is not one int");
  const Json two = Json::array({in(0), in(1)});
  expect_has(shape_error(keras_op("math.SegmentSum", {{"num_segments", nullptr}}, two), {{3, 2}, {3}}),
             "SegmentSum): argument 'num_segments' is missing while segment_ids is a tensor");
  expect_has(shape_error(keras_op("math.SegmentMax", {{"num_segments", 3}, {"sorted", true}}, {in(0), {0, 1, 2}}), {{3, 2}}),
             "SegmentMax): argument 'num_segments' is given with sorted=True");
  expect_has(shape_error(keras_op("math.SegmentMax", {{"num_segments", 3}}, {in(0), {0, 1}}), {{3, 2}}),
             "SegmentMax): argument 'segment_ids' is not of the shape of data's leading dims");
  const Tensor d = Tensor::zeros({3, 2});
  expect_has(error(tf_op("math.segment_sum", x0, {{"segment_ids", {1, 0, 1}}}), {d}),
             "tf.math.segment_sum): argument 'segment_ids' is not sorted and non-negative: segment_ids[1] = 0");
  expect_has(error(tf_op("math.unsorted_segment_sum", x0, {{"segment_ids", {0, 5, 1}}, {"num_segments", 2}}), {d}),
             "argument 'segment_ids' has segment_ids[1] = 5, which is not in [0, 2)");
  expect_has(error_of([&] { keras_op("numpy.NotAnOperation", Json::object(), x0); }), "which kerascpp does not support");
}

}  // namespace
}  // namespace kerascpp
