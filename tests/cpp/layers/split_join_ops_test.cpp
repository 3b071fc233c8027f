// Split / join / gather / scatter op nodes (src/layers/op_nodes/split_join_ops*.cpp): each op's
// backward against central finite differences through the node, inferred shapes against computed
// ones, corners of their semantics (values checked against Keras 3 / TF 2 by hand), and the errors
// for what kerascpp does not run. Forward values against Keras: the ops_split_join* fixtures.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using namespace op_node_testing;  // NOLINT: the helpers of every op node test
using testing::error_of;

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); }
Tensor run1(const LayerPtr& op, const std::vector<Tensor>& in) { return op->call(in, CallContext{})[0]; }
const Json x0 = Json::array({in(0)});

TEST(SplitJoinOps, SeveralOutputsGradients) {
  std::mt19937 g(11);
  const Tensor x = distinct(g, {2, 6, 4});
  expect_gradients_of_each(keras_op("numpy.Split", {{"indices_or_sections", 3}, {"axis", 1}}, x0), {x});
  expect_gradients_of_each(keras_op("numpy.Split", {{"indices_or_sections", {1, 2, 4}}, {"axis", -2}}, x0), {x});
  expect_gradients_of_each(keras_op("numpy.ArraySplit", {{"indices_or_sections", 4}, {"axis", 1}}, x0), {x});
  expect_gradients_of_each(keras_op("numpy.Hsplit", {{"indices_or_sections", {2}}}, x0), {x});
  expect_gradients_of_each(keras_op("numpy.Vsplit", {{"indices_or_sections", 2}}, x0), {x});
  expect_gradients_of_each(keras_op("numpy.Dsplit", {{"indices_or_sections", 2}}, x0), {x});
  expect_gradients_of_each(tf_op("split", {in(0)}, {{"num_or_size_splits", {1, -1, 2}}, {"axis", 1}}), {x});
  expect_gradients_of_each(keras_op("core.Unstack", {{"num", nullptr}, {"axis", -1}}, x0), {x});
  expect_gradients_of_each(tf_op("unstack", {in(0)}, {{"axis", 1}}), {x});
  const Tensor a = distinct(g, {3}), b = distinct(g, {2, 2});
  expect_gradients_of_each(keras_op("numpy.Meshgrid", {{"indexing", "ij"}}, {in(0), in(1)}), {a, b});
  expect_gradients_of_each(keras_op("numpy.Meshgrid", {{"indexing", "xy"}}, {in(0), in(1), in(2)}), {a, b, distinct(g, {2})});
}

TEST(SplitJoinOps, SplitsAndGridsValues) {
  const Tensor x = Tensor::from_vector({7}, {0, 1, 2, 3, 4, 5, 6});
  const auto pieces = keras_op("numpy.ArraySplit", {{"indices_or_sections", 3}}, x0)->call({x}, CallContext{});
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(values(pieces[0]), (std::vector<float>{0, 1, 2}));  // numpy: the first n % k pieces one longer
  EXPECT_EQ(values(pieces[2]), (std::vector<float>{5, 6}));
  const auto at = keras_op("numpy.Split", {{"indices_or_sections", {2, 5}}}, x0)->call({x}, CallContext{});
  EXPECT_EQ(values(at[1]), (std::vector<float>{2, 3, 4}));
  const auto empty = keras_op("numpy.Split", {{"indices_or_sections", {3, 3}}}, x0)->call({x}, CallContext{});
  EXPECT_EQ(empty[1].shape(), (Shape{0}));  // numpy: an empty piece between equal split points
  EXPECT_EQ(values(empty[2]), (std::vector<float>{3, 4, 5, 6}));
  // meshgrid "xy": the first two axes swapped; "ij" as given.
  const Tensor p = Tensor::from_vector({2}, {1, 2}), q = Tensor::from_vector({3}, {7, 8, 9});
  const auto xy = keras_op("numpy.Meshgrid", Json::object(), {in(0), in(1)})->call({p, q}, CallContext{});
  EXPECT_EQ(xy[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values(xy[0]), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(values(xy[1]), (std::vector<float>{7, 7, 8, 8, 9, 9}));
  // unravel_index: numpy's coordinates (floor mod / floor division, as TensorFlow's).
  const auto rc = keras_op("numpy.UnravelIndex", {{"shape", {3, 4}}}, x0)->call({Tensor::from_vector({3}, {5, 11, 0})}, CallContext{});
  EXPECT_EQ(values(rc[0]), (std::vector<float>{1, 2, 0}));
  EXPECT_EQ(values(rc[1]), (std::vector<float>{1, 3, 0}));
  EXPECT_EQ(keras_op("numpy.UnravelIndex", {{"shape", {3, 4}}}, x0)->compute_output_shape({{5}}), (std::vector<Shape>{{5}, {5}}));
}

TEST(SplitJoinOps, JoinsAndViewsGradients) {
  std::mt19937 g(12);
  const Tensor x = distinct(g, {2, 3, 4}), y = distinct(g, {2, 3, 4}), v = distinct(g, {3}), m = distinct(g, {2, 3});
  const Json xy = Json::array({in(0), in(1)});
  expect_gradients(keras_op("numpy.Hstack", Json::object(), Json::array({xy})), {x, y});
  expect_gradients(keras_op("numpy.Vstack", Json::object(), Json::array({xy})), {x, y});
  expect_gradients(keras_op("numpy.Dstack", Json::object(), Json::array({xy})), {x, y});
  expect_gradients(keras_op("numpy.Dstack", Json::object(), Json::array({xy})), {m, m});  // rank 2: (2, 3, 1) each
  expect_gradients(keras_op("numpy.Hstack", Json::object(), Json::array({xy})), {v, v});
  expect_gradients(keras_op("numpy.Append", {{"axis", 1}}, xy), {x, y});
  expect_gradients(keras_op("numpy.Append", {{"axis", nullptr}}, xy), {x, v});
  expect_gradients(keras_op("numpy.BroadcastTo", {{"shape", {2, 2, 3}}}, x0), {m.reshape({2, 1, 3})});
  expect_gradients(tf_op("broadcast_to", {in(0)}, {{"shape", {4, 3}}}), {v});
  expect_gradients(keras_op("numpy.Ravel", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Fliplr", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Flipud", Json::object(), x0), {x});
  for (int k : {-1, 1, 3, 4})
    expect_gradients(keras_op("numpy.Rot90", {{"k", k}, {"axes", {2, 0}}}, x0), {x});
  expect_gradients(keras_op("numpy.Rot90", {{"k", 6}, {"axes", {0, 2}}}, x0), {distinct(g, {3, 2, 3})});  // a half turn
  expect_gradients(keras_op("numpy.Rot90", Json::object(), x0), {x});
  const Tensor img = distinct(g, {2, 3, 4, 2});
  expect_gradients(tf_op("image.flip_left_right", {in(0)}, Json::object()), {img});
  expect_gradients(tf_op("image.flip_up_down", {in(0)}, Json::object()), {x});  // one image: its rows
  expect_gradients(tf_op("image.rot90", {in(0)}, {{"k", 3}}), {img});
  expect_gradients(keras_op("core.Slice", {{"shape", {-1, 2, 3}}}, {in(0), {0, 1, 1}}), {x});
  expect_gradients(tf_op("slice", {in(0)}, {{"begin", {1, 0, 2}}, {"size", {1, -1, 2}}}), {x});
  expect_gradients(tf_op("strided_slice", {in(0)},
                         {{"begin", {0, 2, 0}}, {"end", {0, 0, 3}}, {"strides", {1, -2, 1}}, {"begin_mask", 1}, {"end_mask", 3}}),
                   {x});
  expect_gradients(keras_op("numpy.Copy", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Conjugate", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Real", Json::object(), x0), {x});
  expect_gradients(tf_op("identity", {in(0)}, Json::object()), {x});
  expect_gradients(keras_op("numpy.FullLike", {{"dtype", nullptr}}, xy), {x, v.reshape({3, 1})});
  expect_gradients(keras_op("core.SaturateCast", {{"dtype", "float32"}}, x0), {x});
  // float16: the gradient passes inside its range, none where the value is clipped.
  GradientTape tape;
  Tensor w = Tensor::from_vector({2}, {1e5f, 3.f});
  tape.watch(w);
  const Tensor h = run1(keras_op("core.SaturateCast", {{"dtype", "float16"}}, x0), {w});
  EXPECT_EQ(values(h), (std::vector<float>{65504.f, 3.f}));
  EXPECT_EQ(values(tape.gradient(h, {w})[0]), (std::vector<float>{0.f, 1.f}));
}

TEST(SplitJoinOps, ViewsValues) {
  const Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  // numpy.rot90 of [[0 1 2] [3 4 5]]: [[2 5] [1 4] [0 3]].
  EXPECT_EQ(values(run1(keras_op("numpy.Rot90", Json::object(), x0), {x})), (std::vector<float>{2, 5, 1, 4, 0, 3}));
  EXPECT_EQ(values(run1(keras_op("numpy.Rot90", {{"k", 3}}, x0), {x})), (std::vector<float>{3, 0, 4, 1, 5, 2}));
  EXPECT_EQ(values(run1(keras_op("numpy.Rot90", {{"k", 2}}, x0), {Tensor::from_vector({2, 2}, {0, 1, 2, 3})})),
            (std::vector<float>{3, 2, 1, 0}));
  EXPECT_EQ(values(run1(tf_op("strided_slice", {in(0)}, {{"begin", {1, -1}}, {"end", {2, 0}}, {"strides", {1, -1}},
                                                        {"shrink_axis_mask", 1}}),
                        {x})),
            (std::vector<float>{5, 4}));
  EXPECT_EQ(run1(tf_op("strided_slice", {in(0)}, {{"begin", {0, 0}}, {"end", {0, 0}}, {"new_axis_mask", 1}, {"ellipsis_mask", 2}}), {x}).shape(),
            (Shape{1, 2, 3}));
  const Tensor s = Tensor::from_vector({5}, {-3.f, -0.f, 0.4f, 2.7f, 400.f});
  EXPECT_EQ(values(run1(keras_op("numpy.Angle", Json::object(), x0), {s})),
            (std::vector<float>{std::numbers::pi_v<float>, 0, 0, 0, 0}));  // TensorFlow: where(x < 0, pi, 0)
  EXPECT_EQ(values(run1(keras_op("numpy.Imag", Json::object(), x0), {s})), (std::vector<float>(5, 0.f)));
  EXPECT_EQ(values(run1(keras_op("numpy.Isreal", Json::object(), x0), {s})), (std::vector<float>(5, 1.f)));
  EXPECT_EQ(values(run1(keras_op("core.SaturateCast", {{"dtype", "uint8"}}, x0), {s})), (std::vector<float>{0, 0, 0, 2, 255}));
  EXPECT_EQ(values(run1(keras_op("core.SaturateCast", {{"dtype", "int32"}}, x0), {Tensor::from_vector({2}, {3e9f, -3e9f})})),
            (std::vector<float>{2147483520.f, -2147483648.f}));
  EXPECT_EQ(values(run1(keras_op("numpy.FullLike", {{"dtype", "int32"}}, {in(0), 2.7}), {x})), (std::vector<float>(6, 2.f)));
  EXPECT_EQ(values(run1(keras_op("numpy.EmptyLike", {{"dtype", "float16"}}, x0), {x})), (std::vector<float>(6, 0.f)));
  EXPECT_EQ(keras_op("numpy.Dstack", Json::object(), Json::array({Json::array({in(0), in(1)})}))->compute_output_shape({{-1, 3}, {-1, 3}}),
            (std::vector<Shape>{{-1, 3, 2}}));
}

TEST(SplitJoinOps, GatherScatterGradients) {
  std::mt19937 g(13);
  const Tensor x = distinct(g, {2, 3, 4}), u2 = distinct(g, {2, 4}), u1 = distinct(g, {3});
  const Json idx = {{{3, 0}, {0, 1}, {2, 2}}, {{1, 3}, {0, -1}, {2, 1}}};  // -1 wraps
  expect_gradients(keras_op("numpy.TakeAlongAxis", {{"axis", -1}}, {in(0), idx}), {x});
  expect_gradients(keras_op("numpy.TakeAlongAxis", {{"axis", 1}}, {in(0), {{{2}, {0}, {0}, {1}}}}), {x});  // broadcast indices
  expect_gradients(keras_op("numpy.TakeAlongAxis", {{"axis", nullptr}}, {in(0), {5, 23, 5}}), {x});
  expect_gradients(tf_op("gather_nd", {in(0)}, {{"indices", {{1, 2}, {0, 0}, {1, 2}}}}), {x});
  expect_gradients(tf_op("compat.v1.gather_nd", {in(0)}, {{"indices", {{{2}, {0}}, {{1}, {1}}}}, {"batch_dims", 1}, {"name", nullptr},
                                                          {"bad_indices_policy", ""}}),
                   {x});
  expect_gradients(tf_op("gather_nd", {in(0)}, {{"indices", {{{1, 3}}, {{2, 0}}}}, {"batch_dims", 1}}), {x});
  const Json idx2 = {{1, 2}, {0, 0}};
  expect_gradients(keras_op("core.ScatterUpdate", Json::object(), {in(0), idx2, in(1)}), {x, u2});
  expect_gradients(keras_op("core.ScatterUpdate", {{"reduction", "add"}}, {in(0), {{1, 2}, {1, 2}}, in(1)}), {x, u2});
  expect_gradients(keras_op("core.ScatterUpdate", {{"reduction", "max"}}, {in(0), idx2, in(1)}), {x, u2});
  expect_gradients(tf_op("tensor_scatter_nd_min", {in(0)}, {{"indices", {{1, 0, 3}, {0, 2, 1}, {1, 1, 1}}}, {"updates", in(1)}}),
                   {x, u1});
  expect_gradients(tf_op("tensor_scatter_nd_add", {in(0)}, {{"indices", idx2}, {"updates", in(1)}}), {x, u2});
  expect_gradients(keras_op("core.Scatter", {{"shape", {3, 3, 4}}}, {idx2, in(0)}), {u2});
  expect_gradients(tf_op("scatter_nd", {{{2}, {0}}}, {{"updates", in(0)}, {"shape", {4, 2, 3}}}), {distinct(g, {2, 2, 3})});
  expect_gradients(keras_op("core.SliceUpdate", Json::object(), {in(0), {1, 1, 5}, in(1)}), {x, distinct(g, {1, 2, 2})});  // clamped
  const Json c1 = {1, 0, 0, 1}, c2 = {{1}, {1}, {0}};  // conditions broadcast against the choices
  expect_gradients(keras_op("numpy.Select", Json::object(), {Json::array({c1, c2}), Json::array({in(0), in(1)}), 0.5}),
                   {x, distinct(g, {3, 4})});
}

TEST(SplitJoinOps, GatherScatterValues) {
  const Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  // tf.scatter_nd adds duplicates; tensor_scatter_nd_update: the last write wins.
  EXPECT_EQ(values(run1(tf_op("scatter_nd", {{{1}, {1}, {3}}}, {{"updates", {1, 2, 5}}, {"shape", {4}}}), {})),
            (std::vector<float>{0, 3, 0, 5}));
  EXPECT_EQ(values(run1(tf_op("tensor_scatter_nd_update", {in(0)}, {{"indices", {{1}, {0}}}, {"updates", {{7, 7, 7}, {9, 9, 9}}}}), {x})),
            (std::vector<float>{9, 9, 9, 7, 7, 7}));
  EXPECT_EQ(values(run1(keras_op("core.SliceUpdate", Json::object(), {in(0), {1, 2}, {{8, 9}}}), {x})),
            (std::vector<float>{0, 1, 2, 3, 8, 9}));  // start (1, 2) clamped to (1, 1)
  EXPECT_EQ(values(run1(tf_op("gather_nd", {in(0)}, {{"indices", {{1}, {0}}}}), {x})), (std::vector<float>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(values(run1(keras_op("numpy.Select", Json::object(), {Json::array({in(0)}), Json::array({in(1)})}),
                        {Tensor::from_vector({2, 3}, {1, 0, 1, 0, 0, 1}), x})),
            (std::vector<float>{0, 0, 2, 0, 0, 5}));
  EXPECT_EQ(keras_op("numpy.TakeAlongAxis", {{"axis", 0}}, {in(0), in(1)})->compute_output_shape({{-1, 3}, {5, 1}}),
            (std::vector<Shape>{{5, 3}}));
}

TEST(SplitJoinOps, ErrorsNameTheOpAndTheArgument) {
  const Tensor t = Tensor::zeros({2, 6, 4});
  auto error = [&](const LayerPtr& op, const std::vector<Tensor>& in) { return error_of([&] { op->call(in, CallContext{}); }); };
  auto names = [](const std::string& e, const std::string& cls, const std::string& what) {
    EXPECT_NE(e.find(cls), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  names(error(keras_op("numpy.Split", {{"indices_or_sections", 4}, {"axis", 1}}, x0), {t}), "numpy.Split",
        "argument 'indices_or_sections' is not a number of sections that divides the axis's size 6");
  names(error(keras_op("numpy.Split", {{"indices_or_sections", 2}, {"axis", 3}}, x0), {t}), "numpy.Split",
        "argument 'axis' is not an axis of the input's 3 dims");
  names(error(keras_op("numpy.Split", {{"indices_or_sections", {3, 1}}, {"axis", 1}}, x0), {t}), "numpy.Split",
        "argument 'indices_or_sections' is not a non-decreasing list");
  names(error(keras_op("numpy.ArraySplit", {{"indices_or_sections", {3}}, {"axis", 1}}, x0), {t}), "numpy.ArraySplit",
        "argument 'indices_or_sections' is not an int");
  names(error(tf_op("split", {in(0)}, {{"num_or_size_splits", {1, 2}}, {"axis", 1}}), {t}), "tf.split",
        "argument 'num_or_size_splits' is not a list of sizes that add up to the axis's size 6");
  names(error(keras_op("core.Unstack", {{"num", 3}, {"axis", 1}}, x0), {t}), "core.Unstack", "argument 'num' is not the axis's size 6");
  names(error(keras_op("numpy.Meshgrid", {{"indexing", "yx"}}, x0), {t}), "numpy.Meshgrid", "argument 'indexing'");
  names(error(keras_op("numpy.UnravelIndex", {{"shape", {3, 4}}}, x0), {Tensor::zeros({2, 2})}), "numpy.UnravelIndex",
        "argument 'indices' has rank 2");
  names(error(keras_op("numpy.Rot90", {{"axes", {1, 1}}}, x0), {t}), "numpy.Rot90", "argument 'axes' is not two different axes");
  names(error_of([&] { keras_op("numpy.Rot90", {{"k", 2}, {"axes", {1, 2}}}, x0)->compute_output_shape({{-1, 6, 4}}); }),
        "numpy.Rot90", "argument 'k' makes a half turn of a plane of 6 x 4 values");
  names(error(keras_op("numpy.Rot90", Json::object(), x0), {Tensor::zeros({3})}), "numpy.Rot90", "argument 'x' is not a tensor of rank >= 2");
  names(error(tf_op("image.flip_left_right", {in(0)}, Json::object()), {Tensor::zeros({2, 3})}), "image.flip_left_right",
        "an image of rank 3 or a batch of rank 4");
  names(error(keras_op("numpy.BroadcastTo", {{"shape", {2, 5, 4}}}, x0), {t}), "numpy.BroadcastTo",
        "argument 'shape' is not a shape the input (2, 6, 4) broadcasts to");
  names(error(keras_op("core.Slice", {{"shape", {1, 7, 1}}}, {in(0), {0, 0, 0}}), {t}), "core.Slice", "argument 'shape' is not a window");
  names(error(keras_op("core.Slice", {{"shape", {1, 1, 1}}}, {in(0), in(1)}), {t, Tensor::zeros({3})}), "core.Slice",
        "argument 'start_indices' is not a constant");
  EXPECT_NE(error_of([&] { keras_op("core.SaturateCast", {{"dtype", "uint16"}}, x0); }).find("dtype 'uint16'"), std::string::npos);
  names(error(keras_op("numpy.TakeAlongAxis", {{"axis", 1}}, {in(0), {{{7}}}}), {t}), "numpy.TakeAlongAxis",
        "argument 'indices' holds 7, outside the axis's size 6");
  names(error(keras_op("numpy.TakeAlongAxis", {{"axis", nullptr}}, {in(0), {{1}}}), {t}), "numpy.TakeAlongAxis",
        "argument 'indices' is not of rank 1 when axis is None");
  names(error(keras_op("core.ScatterUpdate", {{"reduction", "mul"}}, {in(0), {{0}}, in(0)}), {t}), "core.ScatterUpdate",
        "argument 'reduction'");
  names(error(keras_op("core.ScatterUpdate", Json::object(), {in(0), {{0, 6}}, {{1, 1, 1, 1}}}), {t}), "core.ScatterUpdate",
        "argument 'indices' holds 6, outside [0, 6) for dim 1");
  names(error(keras_op("core.ScatterUpdate", Json::object(), {in(0), {{0, 1}}, {1.0}}), {t}), "core.ScatterUpdate",
        "argument 'updates' is not of the shape (1, 4)");
  names(error(tf_op("gather_nd", {in(0)}, {{"indices", {{0}}}, {"batch_dims", 3}}), {t}), "gather_nd", "argument 'indices'");
  names(error(tf_op("gather_nd", {in(0)}, {{"indices", {{0}}}, {"bad_indices_policy", "IGNORE"}}), {t}), "gather_nd",
        "argument 'bad_indices_policy'");
  names(error(keras_op("numpy.Select", Json::object(), {Json::array({in(0)}), Json::array({in(0), in(0)})}), {t}), "numpy.Select",
        "argument 'choicelist' is not as long as condlist");
  names(error(keras_op("core.SliceUpdate", Json::object(), {in(0), {0, 0, 0}, in(1)}), {t, Tensor::zeros({3, 1, 1})}),
        "core.SliceUpdate", "argument 'updates' is not a tensor that fits");
}

}  // namespace
}  // namespace kerascpp
