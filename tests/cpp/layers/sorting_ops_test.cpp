// Sorting op nodes: backward of sort / top_k / median / percentile / quantile (dy scattered back to
// the picked positions, with the interpolation weights) against finite differences, inferred shapes,
// corners with the values TensorFlow / Keras give, and the errors. Forward values against Keras:
// the ops_sort_top_k / ops_quantiles fixtures.
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

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}
Tensor run(const LayerPtr& op, const std::vector<Tensor>& in, size_t out = 0) {
  return op->call(in, CallContext{})[out];
}
void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << i;
    else
      EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  }
}

TEST(SortingOps, Gradients) {
  std::mt19937 g(11);
  const Tensor x = distinct(g, {2, 3, 5});
  const Json x0 = Json::array({in(0)});
  expect_gradients(keras_op("numpy.Sort", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Sort", {{"axis", 1}}, x0), {x});
  expect_gradients(keras_op("numpy.Sort", {{"axis", nullptr}}, x0), {x});
  expect_gradients(tf_op("sort", {in(0)}, {{"axis", 0}, {"direction", "DESCENDING"}}), {x});
  expect_gradients(keras_op("math.TopK", {{"k", 3}, {"sorted", true}}, x0), {x});  // the values
  expect_gradients(tf_op("math.top_k", {in(0)}, {{"k", 1}, {"sorted", false}}), {x});
  expect_gradients(keras_op("numpy.Median", {{"axis", {-1}}}, x0), {x});  // 5 values: the middle one
  expect_gradients(keras_op("numpy.Median", {{"axis", {1, 2}}, {"keepdims", true}}, x0), {x});  // 15: the 8th
  expect_gradients(keras_op("numpy.Median", {{"axis", 1}}, x0), {x});                           // 3 values
  expect_gradients(keras_op("numpy.Median", {{"axis", {0}}}, x0), {x});  // 2 values: interpolated
  for (const char* m : {"linear", "lower", "higher", "midpoint", "nearest"})
    expect_gradients(keras_op("numpy.Percentile", {{"axis", -1}, {"method", m}}, {in(0), {10.0, 45.0, 90.0}}),
                     {x});
  expect_gradients(keras_op("numpy.Quantile", {{"axis", {0, 2}}}, {in(0), 0.35}), {x});
  expect_gradients(keras_op("numpy.Nanquantile", {{"axis", 1}, {"method", "midpoint"}}, {in(0), {0.3, 0.6}}),
                   {x});
  expect_gradients(keras_op("numpy.Nanmedian", {{"axis", nullptr}, {"keepdims", true}}, x0), {x});
}

TEST(SortingOps, ShapesOfIntegerResults) {
  std::mt19937 g(12);
  const Tensor x = distinct(g, {2, 3, 5});
  const Json x0 = Json::array({in(0)});
  auto same = [&](const LayerPtr& op, const std::vector<Tensor>& in) {
    std::vector<Shape> shapes;
    for (const Tensor& t : in) shapes.push_back(t.shape());
    const std::vector<Tensor> got = op->call(in, CallContext{});
    const std::vector<Shape> inferred = op->compute_output_shape(shapes);
    ASSERT_EQ(got.size(), inferred.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i].shape(), inferred[i]) << op->name() << " output " << i;
  };
  same(keras_op("numpy.Argsort", {{"axis", 0}}, x0), {x});
  same(keras_op("numpy.Argsort", {{"axis", nullptr}}, x0), {x});
  same(keras_op("math.TopK", {{"k", 2}}, x0), {x});
  same(keras_op("numpy.Percentile", {{"axis", nullptr}, {"keepdims", true}}, {in(0), {5.0, 50.0}}), {x});
  same(keras_op("numpy.Digitize", Json::object(), {in(0), {-0.5, 0.0, 0.5}}), {x});
  same(tf_op("searchsorted", {in(0)}, {{"values", in(1)}, {"side", "right"}}), {x, distinct(g, {2, 3, 4})});
  same(keras_op("math.InTopK", {{"k", 2}}, {in(0), in(1)}),
       {Tensor::from_vector({2}, {0, 4}), distinct(g, {2, 5})});
}

// Values as TensorFlow / Keras 3.15 (TF 2.21) give them.
TEST(SortingOps, CornersAsTensorFlow) {
  // Equal values keep their index order, both directions.
  const Tensor ties = Tensor::from_vector({4}, {1, 1, 0, 1});
  EXPECT_EQ(values(run(tf_op("argsort", {in(0)}, {{"direction", "DESCENDING"}}), {ties})),
            (std::vector<float>{0, 1, 3, 2}));
  EXPECT_EQ(values(run(keras_op("numpy.Argsort", Json::object(), {in(0)}),
                       {Tensor::from_vector({4}, {1, 0, 0, 1})})),
            (std::vector<float>{1, 2, 0, 3}));
  // in_top_k: ties at the boundary are in; a target outside the row or an infinite prediction: false.
  const Tensor p = Tensor::from_vector(
      {4, 3}, {0.5f, 0.5f, 0.1f, 0.3f, 0.3f, 0.3f, 0.1f, INFINITY, 0.2f, 0.9f, 0.2f, 0.4f});
  EXPECT_EQ(values(run(keras_op("math.InTopK", {{"k", 1}}, {in(0), in(1)}),
                       {Tensor::from_vector({4}, {1, 2, 0, 3}), p})),
            (std::vector<float>{1, 1, 0, 0}));
  // tf_keras records tf.math.in_top_k with TF 1's order: predictions first.
  EXPECT_EQ(
      values(run(tf_op("compat.v1.math.in_top_k", {in(0)}, {{"targets", in(1)}, {"k", 2}, {"name", nullptr}}),
                 {p, Tensor::from_vector({4}, {1, 2, 0, 2})})),
      (std::vector<float>{1, 1, 0, 1}));
  const Tensor seq = Tensor::from_vector({1, 4}, {0, 1, 1, 2}),
               v = Tensor::from_vector({1, 4}, {1, -1, 5, 1.5f});
  EXPECT_EQ(values(run(tf_op("searchsorted", {in(0), in(1)}, Json::object()), {seq, v})),
            (std::vector<float>{1, 0, 4, 3}));
  EXPECT_EQ(values(run(keras_op("numpy.SearchSorted", {{"side", "right"}}, {in(0), in(1)}), {seq, v})),
            (std::vector<float>{3, 0, 4, 3}));
  EXPECT_EQ(values(run(keras_op("numpy.Digitize", Json::object(), {in(0), {0.0, 0.5, 1.0}}),
                       {Tensor::from_vector({4}, {-1, 0, 0.5f, 3})})),
            (std::vector<float>{0, 1, 2, 3}));
  // Keras's eager nanmedian / nanpercentile / nanquantile (its TensorFlow backend cannot run them in
  // a graph with an axis, so no fixture has them).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x =
      Tensor::from_vector({2, 2, 5}, {0.5f, nan,   -1,    2,   0.25f, nan,  nan,  nan,  1,    -3,
                                      1.5f, 0.75f, -0.5f, nan, 3,     0.1f, 0.2f, 0.3f, 0.4f, nan});
  expect_near(values(run(keras_op("numpy.Nanmedian", {{"axis", -1}}, {in(0)}), {x})),
              {0.375f, -1, 1.125f, 0.25f});
  expect_near(values(run(keras_op("numpy.Nanpercentile", {{"axis", -1}, {"method", "midpoint"}},
                                  {in(0), {40.0, 75.0}}),
                         {x})),
              {0.375f, -1, 1.125f, 0.25f, 1.25f, -1, 2.25f, 0.35f});
  const Tensor q =
      run(keras_op("numpy.Nanquantile", {{"axis", {0, 2}}, {"keepdims", true}}, {in(0), 0.3}), {x});
  EXPECT_EQ(q.shape(), (Shape{1, 2, 1}));
  expect_near(values(q), {0.275f, 0.15f});
  expect_near(
      values(run(keras_op("numpy.Nanquantile", {{"axis", -1}, {"method", "nearest"}}, {in(0), {0.5, 0.9}}),
                 {x})),
      {0.5f, -3, 1.5f, 0.3f, 2, 1, 3, 0.4f});
  expect_near(values(run(keras_op("numpy.Nanquantile", Json::object(), {in(0), 0.6}), {x})), {0.48f});
  // A NaN makes median / percentile NaN; keras.ops.quantile's op interpolates linearly whatever its
  // method (Quantile.call does not pass it on).
  expect_near(values(run(keras_op("numpy.Median", {{"axis", -1}}, {in(0)}), {x})), {nan, nan, nan, nan});
  const Tensor four = Tensor::from_vector({4}, {4, 1, 3, 2});
  expect_near(values(run(keras_op("numpy.Quantile", {{"method", "lower"}}, {in(0), 0.4}), {four})), {2.2f});
  expect_near(values(run(keras_op("numpy.Percentile", {{"method", "lower"}}, {in(0), 40.0}), {four})), {2});
}

TEST(SortingOps, ErrorsNameTheOpAndTheArgument) {
  const Tensor x = Tensor::zeros({2, 3, 4});
  const Json x0 = Json::array({in(0)});
  auto has = [](const std::string& error, const std::string& what) {
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  has(error_of([&] {
        run(keras_op("numpy.Sort", {{"axis", 3}}, x0), {x});
      }),
      "argument 'axis' is not an axis of the input's 3 dims");
  has(error_of([&] {
        keras_op("numpy.Argsort", {{"axis", -4}}, x0)->compute_output_shape({{2, 3, 4}});
      }),
      "(keras.src.ops.numpy.Argsort): argument 'axis'");
  has(error_of([&] {
        run(tf_op("sort", {in(0)}, {{"direction", "UP"}}), {x});
      }),
      "(TFOpLambda tf.sort): argument 'direction' is neither 'ASCENDING' nor 'DESCENDING'");
  has(error_of([&] {
        run(keras_op("math.TopK", {{"k", 5}}, x0), {x});
      }),
      "(keras.src.ops.math.TopK): argument 'k' is not in [0, 4]");
  has(error_of([&] {
        keras_op("math.TopK", {{"k", 2}, {"sorted", false}}, x0)->compute_output_shape({{2, 4}});
      }),
      "argument 'sorted' is not supported by kerascpp as false with k > 1");
  has(error_of([&] {
        run(keras_op("numpy.Percentile", {{"method", "inverted_cdf"}}, {in(0), 50.0}), {x});
      }),
      "(keras.src.ops.numpy.Percentile): argument 'method' is not one of 'linear'");
  has(error_of([&] {
        run(keras_op("numpy.Percentile", Json::object(), {in(0), 150.0}), {x});
      }),
      "argument 'q' is not in [0, 100]");
  has(error_of([&] {
        run(keras_op("numpy.Median", {{"axis", {1, 1}}}, x0), {x});
      }),
      "argument 'axis' is not a list of distinct axes");
  has(error_of([&] {
        run(keras_op("numpy.SearchSorted", {{"side", "middle"}}, {in(0), in(0)}), {x});
      }),
      "(keras.src.ops.numpy.SearchSorted): argument 'side' is neither 'left' nor 'right'");
  has(error_of([&] {
        keras_op("numpy.SearchSorted", Json::object(), {in(0), in(1)})->compute_output_shape({{4}, {2, 3}});
      }),
      "argument 'values' is not of the rank of `sorted_sequence`");
  has(error_of([&] {
        run(keras_op("numpy.Digitize", Json::object(), {in(0), {1.0, 0.0}}), {x});
      }),
      "argument 'bins' is not increasing");
  has(error_of([&] {
        keras_op("math.InTopK", {{"k", 1}}, {in(0), in(1)})->compute_output_shape({{3}, {2, 5}});
      }),
      "(keras.src.ops.math.InTopK): argument 'targets' is not as long as `predictions` has rows");
  has(error_of([&] {
        keras_op("numpy.Argpartition", {{"kth", 1}}, x0);
      }),
      "keras.src.ops.numpy.Argpartition");
}

}  // namespace
}  // namespace kerascpp
