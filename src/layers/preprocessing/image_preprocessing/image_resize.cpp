#include "layers/preprocessing/image_preprocessing/image_resize.h"

#include <algorithm>

namespace kerascpp::layers {
namespace {

// int32(float32(num) / den) (TF) or int(float(num) / den) (Python): truncation toward zero.
int64_t ratio(int64_t num, int64_t den, bool double_math) {
  if (double_math) return static_cast<int64_t>(static_cast<double>(num) / static_cast<double>(den));
  return static_cast<int64_t>(static_cast<float>(num) / static_cast<float>(den));
}

}  // namespace

std::pair<int, int> image_axes(int rank, bool channels_first) {
  const int h = channels_first ? rank - 2 : rank - 3;
  return {h, h + 1};
}

Tensor image_resize(const Tensor& input, const ImageResize& r, const std::string& who) {
  KCPP_CHECK(input.rank() == 3 || input.rank() == 4, ValueError, "Invalid images rank for ", who,
             ": expected rank 3 (single image) or rank 4 (batch of images). Received input with shape: ",
             shape_str(input.shape()));
  Tensor x = input;
  if (x.rank() == 3) {
    Shape s = x.shape();
    s.insert(s.begin(), 1);
    x = x.reshape(s);
  }
  const auto [ha, wa] = image_axes(4, r.channels_first);
  const int64_t h = x.dim(ha), w = x.dim(wa);
  if (r.aspect == AspectRatio::crop && h > 0 && w > 0) {
    // The largest centred window with the target's aspect ratio.
    const int64_t ch = std::max<int64_t>(std::min(h, ratio(w * r.height, r.width, r.double_box)), 1);
    const int64_t cw = std::max<int64_t>(std::min(w, ratio(h * r.width, r.height, r.double_box)), 1);
    std::vector<int64_t> begin(4, 0), size = x.shape();
    begin[ha] = ratio(h - ch, 2, r.double_box);
    begin[wa] = ratio(w - cw, 2, r.double_box);
    size[ha] = ch;
    size[wa] = cw;
    x = ops::slice(x, begin, size);
  } else if (r.aspect == AspectRatio::pad) {
    // Keras pads `start` rows on BOTH sides (so an odd difference gains one row less than asked).
    const int64_t ph = std::max(h, ratio(w * r.height, r.width, false));
    const int64_t pw = std::max(w, ratio(h * r.width, r.height, false));
    const int64_t hs = ratio(ph - h, 2, false), ws = ratio(pw - w, 2, false);
    std::vector<std::pair<int64_t, int64_t>> pads(4, {0, 0});
    pads[ha] = {hs, hs};
    pads[wa] = {ws, ws};
    if (hs > 0 || ws > 0) x = ops::pad(x, pads, r.fill_value);
  }
  Tensor y = ops::resize(x, r.height, r.width, r.method, r.channels_first);
  if (input.rank() == 3) {
    Shape s = y.shape();
    s.erase(s.begin());
    y = y.reshape(s);
  }
  return y;
}

Shape resized_image_shape(const Shape& x, const ImageResize& r, const std::string& who) {
  const int rank = static_cast<int>(x.size());
  KCPP_CHECK(rank == 3 || rank == 4, ValueError, "Input 0 of ", who,
             " is incompatible with the layer: expected rank 3 or 4. Received: shape=", shape_str(x));
  const auto [ha, wa] = image_axes(rank, r.channels_first);
  Shape out = x;
  out[ha] = r.height;
  out[wa] = r.width;
  return out;
}

}  // namespace kerascpp::layers
