// Signal op nodes: backward of fft / fft2 / ifft2 / rfft / irfft / stft / istft / extract_sequences /
// tf.signal.frame (the adjoint transforms) against finite differences, inferred shapes, corners with
// the values Keras gives, and the errors. Forward values against Keras: the ops_fft / ops_stft fixtures.
#include <gtest/gtest.h>

#include <cmath>
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
void expect_near(const Tensor& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want[i], tol) << i;
}
const Json kPair = Json::array({Json::array({in(0), in(1)})});

TEST(SignalOps, Gradients) {
  std::mt19937 g(21);
  const Tensor re = distinct(g, {2, 3, 5}), im = distinct(g, {2, 3, 5}), x = distinct(g, {2, 11});
  expect_gradients_of_each(keras_op("math.FFT", Json::object(), kPair), {re, im});
  expect_gradients_of_each(keras_op("math.FFT2", Json::object(), kPair), {re, im});
  expect_gradients_of_each(keras_op("math.IFFT2", Json::object(), kPair), {re, im});
  expect_gradients_of_each(keras_op("math.RFFT", Json::object(), {in(0)}), {re});
  expect_gradients_of_each(keras_op("math.RFFT", {{"fft_length", 4}}, {in(0)}), {re});
  expect_gradients_of_each(keras_op("math.RFFT", {{"fft_length", 7}}, {in(0)}), {re});
  expect_gradients(keras_op("math.IRFFT", Json::object(), kPair), {re, im});
  expect_gradients(keras_op("math.IRFFT", {{"fft_length", 5}}, kPair), {re, im});
  expect_gradients_of_each(
      keras_op("math.STFT", {{"sequence_length", 4}, {"sequence_stride", 2}, {"fft_length", 6}}, {in(0)}),
      {x});
  expect_gradients_of_each(keras_op("math.STFT",
                                    {{"sequence_length", 5},
                                     {"sequence_stride", 3},
                                     {"fft_length", 5},
                                     {"window", "hamming"},
                                     {"center", false}},
                                    {in(0)}),
                           {x});
  const Tensor sr = distinct(g, {2, 4, 4}), si = distinct(g, {2, 4, 4});  // 4 frames of fft_length 6
  expect_gradients(
      keras_op("math.ISTFT", {{"sequence_length", 4}, {"sequence_stride", 2}, {"fft_length", 6}}, kPair),
      {sr, si});
  expect_gradients(keras_op("math.ISTFT",
                            {{"sequence_length", 6},
                             {"sequence_stride", 3},
                             {"fft_length", 6},
                             {"window", nullptr},
                             {"center", false},
                             {"length", 9}},
                            kPair),
                   {sr, si});
  expect_gradients(
      keras_op("math.ExtractSequences", {{"sequence_length", 4}, {"sequence_stride", 3}}, {in(0)}), {x});
  expect_gradients(tf_op("signal.frame", {in(0), 3, 2}, {{"pad_end", true}, {"pad_value", 0.5}}), {x});
  expect_gradients(tf_op("signal.frame", {in(0)}, {{"frame_length", 2}, {"frame_step", 1}, {"axis", 1}}),
                   {re});
}

// Values as Keras 3.15 (TF 2.21) gives them.
TEST(SignalOps, CornersAsKeras) {
  // A hann window of odd length: TensorFlow's "periodic" window keeps the period length - 1 then.
  const Tensor x = Tensor::from_vector({7}, {0.5f, -1, 2, 0.25f, 1.5f, -0.75f, 1});
  const Json stft = {{"sequence_length", 5},
                     {"sequence_stride", 2},
                     {"fft_length", 6},
                     {"window", "hann"},
                     {"center", false}};
  const std::vector<Tensor> z = keras_op("math.STFT", stft, {in(0)})->call({x}, CallContext{});
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0].shape(), (Shape{1, 4}));
  expect_near(z[0], {1.625f, -1.375f, -0.625f, 2.375f});
  expect_near(z[1], {0, -1.299038f, 2.1650634f, 0});
  expect_near(keras_op("math.ISTFT", stft, kPair)->call(z, CallContext{})[0], {0, -0.5f, 2, 0.125f, 0, 0});
  // tf.signal.frame's pad_end: ceil(n / step) frames, filled with pad_value.
  const Tensor f = tf_op("signal.frame", {in(0), 3, 3}, {{"pad_end", true}, {"pad_value", 9}})
                       ->call({x}, CallContext{})[0];
  EXPECT_EQ(f.shape(), (Shape{3, 3}));
  EXPECT_EQ(values(f), (std::vector<float>{0.5f, -1, 2, 0.25f, 1.5f, -0.75f, 1, 9, 9}));
}

TEST(SignalOps, ErrorsNameTheOpAndTheArgument) {
  const Tensor x = Tensor::zeros({2, 6});
  auto has = [](const std::string& error, const std::string& what) {
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  has(error_of([&] { keras_op("math.FFT", Json::object(), {in(0)})->call({x}, CallContext{}); }),
      "(keras.src.ops.math.FFT): argument 'x' is not a tuple of two tensors (real, imag)");
  has(error_of([&] {
        keras_op("math.FFT2", Json::object(), kPair)->compute_output_shape({{2, 6}, {2, 5}});
      }),
      "argument 'x' is not a pair of tensors of one shape");
  has(error_of([&] {
        keras_op("math.RFFT", {{"fft_length", 0}}, {in(0)})->call({x}, CallContext{});
      }),
      "(keras.src.ops.math.RFFT): argument 'fft_length' is not a positive integer");
  const Json stft = {{"sequence_length", 4}, {"sequence_stride", 2}, {"fft_length", 4}};
  Json bad = stft;
  bad["window"] = "blackman";
  has(error_of([&] { keras_op("math.STFT", bad, {in(0)})->call({x}, CallContext{}); }),
      "(keras.src.ops.math.STFT): argument 'window' is not 'hann', 'hamming', None or a list of numbers");
  bad = stft;
  bad["fft_length"] = 3;
  has(error_of([&] {
        keras_op("math.STFT", bad, {in(0)})->compute_output_shape({{2, 6}});
      }),
      "argument 'fft_length' is not at least `sequence_length`");
  bad = stft;
  bad["window"] = {1, 2};
  has(error_of([&] { keras_op("math.STFT", bad, {in(0)})->call({x}, CallContext{}); }),
      "argument 'window' is not of shape (sequence_length,) = (4,)");
  has(error_of([&] {
        keras_op("math.STFT", {{"sequence_length", 4}, {"sequence_stride", 2}, {"fft_length", 16}}, {in(0)})
            ->compute_output_shape({{2, 6}});
      }),
      "argument 'x' is not longer than fft_length / 2");
  has(error_of([&] {
        keras_op("math.ISTFT", stft, kPair)->compute_output_shape({{6}, {6}});
      }),
      "(keras.src.ops.math.ISTFT): argument 'x' is not of rank 2 or more");
  has(error_of([&] {
        tf_op("signal.frame", {in(0), 3, 2}, {{"axis", 2}})->compute_output_shape({{2, 6}});
      }),
      "(TFOpLambda tf.signal.frame): argument 'axis' is not an axis of the input's 2 dims");
  has(error_of([&] {
        keras_op("math.ExtractSequences", {{"sequence_length", 0}, {"sequence_stride", 1}}, {in(0)})
            ->call({x}, CallContext{});
      }),
      "argument 'sequence_length' is not a positive integer");
  // Complex TensorFlow functions stay unknown: kerascpp has no complex tensors.
  has(error_of([&] { tf_op("signal.rfft", {in(0)}, Json::object()); }),
      "tf.signal.rfft, which kerascpp does not support");
}

}  // namespace
}  // namespace kerascpp
