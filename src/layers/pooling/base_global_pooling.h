// The shared body of GlobalMaxPooling1D-3D and GlobalAveragePooling1D-3D, as Keras's
// keras/src/layers/pooling/base_global_pooling.py: the max or mean over the spatial dims.
// x: (batch, *spatial, channels) -> (batch, channels), or (batch, 1, ..., 1, channels) with keepdims;
// channels_first: (batch, channels, *spatial) -> (batch, channels) or (batch, channels, 1, ..., 1).
// GlobalAveragePooling1D supports masking, as Keras's: the mean over the unmasked steps only, and no
// mask on its output. The others do not (Keras 3's GlobalMaxPooling1D drops a mask with a warning).
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

class BaseGlobalPooling : public Layer {
 public:
  BaseGlobalPooling(Json given, std::string cls, int dims, bool max);
  std::string class_name() const override { return cls_; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override;
  bool supports_masking() const override { return cls_ == "GlobalAveragePooling1D"; }
  // What the inference plan reads (layers/plan_parts.h); the plan never gives it a mask.
  bool max() const { return max_; }
  bool channels_first() const { return channels_first_; }
  std::vector<Tensor> compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>&) const override { return {}; }

 private:
  std::vector<int> spatial_axes() const;
  const std::string cls_;
  const int dims_;
  const bool max_;
  bool channels_first_;
  bool keepdims_;
};

}  // namespace kerascpp::layers
