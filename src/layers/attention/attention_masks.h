// What the attention layers share: their masks as float32 1 / 0 tensors that broadcast against the
// scores, and the masked softmax (keras/src/layers/attention/*.py, keras/src/layers/activations/softmax.py).
#pragma once

#include "kerascpp/tensor.h"

namespace kerascpp::layers {

// (1, tq, ts): 1 where key position j <= query position i (Keras's cumsum construction).
Tensor causal_mask(int64_t tq, int64_t ts);
// (1, tq, ts): 1 where |i - j| < window (MultiHeadAttention's sliding_window).
Tensor sliding_window_mask(int64_t tq, int64_t ts, int64_t window);
// a AND b for 1 / 0 masks, broadcast; either may be undefined (then the other).
Tensor and_masks(const Tensor& a, const Tensor& b);

// How a row whose every position is masked comes out. Keras 3's Softmax layer (and every attention
// path that goes through it) sets it to zeros; tf_keras and Keras 3's dot_product_attention leave
// the softmax of equal scores, uniform.
enum class MaskedRows { zero, uniform };
// softmax over the last `axes` axes of x (jointly), masked positions (mask 0, broadcast to x) sent to
// -1e9 first; mask undefined: plain softmax.
Tensor masked_softmax(const Tensor& x, const Tensor& mask, int axes, MaskedRows rows);

}  // namespace kerascpp::layers
