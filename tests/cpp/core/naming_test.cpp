// Automatic layer names and Keras's snake_case of class names.
#include "core/naming.h"

#include <gtest/gtest.h>

namespace kerascpp {
namespace {

TEST(Naming, SnakeCaseIsKeras3s) {
  // Expected values printed by keras.src.utils.naming.to_snake_case of Keras 3.15.1.
  const std::pair<const char*, const char*> cases[] = {
      {"PReLU", "p_re_lu"},
      {"Conv2DTranspose", "conv2d_transpose"},
      {"Dense", "dense"},
      {"BatchNormalization", "batch_normalization"},
      {"LSTM", "lstm"},
      {"GRU", "gru"},
      {"MultiHeadAttention", "multi_head_attention"},
      {"ReLU", "re_lu"},
      {"UpSampling2D", "up_sampling2d"},
      {"GlobalAveragePooling1D", "global_average_pooling1d"},
      {"ELU", "elu"},
      {"SeparableConv2D", "separable_conv2d"},
      {"TFOpLambda", "tf_op_lambda"},
      {"CuDNNLSTM", "cu_dnnlstm"},
      {"EinsumDense", "einsum_dense"},
      {"RMSNormalization", "rms_normalization"},
      {"HTTPServer2", "http_server2"},
      {"A", "a"},
      {"", ""},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(to_snake_case(in), want) << in;
}

TEST(Naming, UniqueNamesCountPerPrefixUntilReset) {
  reset_automatic_names();
  EXPECT_EQ(unique_name("p_re_lu"), "p_re_lu");
  EXPECT_EQ(unique_name("p_re_lu"), "p_re_lu_1");
  EXPECT_EQ(unique_name("dense"), "dense");
  EXPECT_EQ(unique_name("p_re_lu"), "p_re_lu_2");
  reset_automatic_names();
  EXPECT_EQ(unique_name("p_re_lu"), "p_re_lu");
}

}  // namespace
}  // namespace kerascpp
