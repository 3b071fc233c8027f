// The shared body of GlobalMaxPooling1D-3D and GlobalAveragePooling1D-3D, as Keras's
// keras/src/layers/pooling/base_global_pooling.py: the max or mean over the spatial dims.
// x: (batch, *spatial, channels) -> (batch, channels), or (batch, 1, ..., 1, channels) with keepdims;
// channels_first: (batch, channels, *spatial) -> (batch, channels) or (batch, channels, 1, ..., 1).
// Masks (GlobalAveragePooling1D's mask argument) are not supported: kerascpp has no masking yet.
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

class BaseGlobalPooling : public Layer {
 public:
  BaseGlobalPooling(const Json& config, std::string cls, int dims, bool max);
  std::string class_name() const override { return cls_; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override;

 private:
  std::vector<int> spatial_axes() const;
  const std::string cls_;
  const int dims_;
  const bool max_;
  bool channels_first_;
  bool keepdims_;
};

}  // namespace kerascpp::layers
