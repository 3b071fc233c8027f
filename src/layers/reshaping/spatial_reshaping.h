// The shared bodies of ZeroPadding1D-3D, Cropping1D-3D and UpSampling1D-3D. Keras writes one class
// per file (keras/src/layers/reshaping/zero_padding2d.py...); here each of those files is a thin
// factory over the family class below, which holds the shape rules and the call.
//
// Inputs: (batch, *spatial, channels), or (batch, channels, *spatial) when channels_first; `dims`
// spatial dims (1, 2 or 3).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kerascpp/layer.h"
#include "ops/ops.h"

namespace kerascpp::layers {

using Pads = std::vector<std::pair<int64_t, int64_t>>;

class SpatialLayer : public Layer {
 public:
  // has_data_format: false for Cropping1D / UpSampling1D, which Keras fixes to channels_last.
  SpatialLayer(Json given, std::string cls, int dims, bool has_data_format);
  std::string class_name() const override { return cls_; }

 protected:
  // ValueError naming the layer unless there is one input of rank dims + 2.
  void expect_rank(const std::vector<Shape>& in) const;
  // Axis of spatial dim i (0-based) in the full input.
  int spatial_axis(int i) const { return channels_first_ ? 2 + i : 1 + i; }
  std::string who() const;

  const std::string cls_;
  const int dims_;
  bool channels_first_ = false;
};

// ZeroPadding{1,2,3}D: config `padding` (see pair_list), zeros added around the spatial dims.
class ZeroPaddingBase : public SpatialLayer {
 public:
  ZeroPaddingBase(Json given, std::string cls, int dims, Pads fallback);
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override;
  // Per axis of an input of rank dims() + 2, as call() pads it.
  Pads pads(int rank) const;
  int dims() const { return dims_; }

 private:
  Pads padding_;
};

// Cropping{1,2,3}D: config `cropping`; each cropped dim must keep at least one element.
class CroppingBase : public SpatialLayer {
 public:
  CroppingBase(Json given, std::string cls, int dims, Pads fallback);
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override;

 private:
  Pads cropping_;
};

// UpSampling{1,2,3}D: config `size`; each spatial dim repeated size[i] times (numpy.repeat), or for
// UpSampling2D with interpolation bilinear / bicubic, tf.image.resize to (size[0] * h, size[1] * w).
class UpSamplingBase : public SpatialLayer {
 public:
  UpSamplingBase(Json given, std::string cls, int dims, bool has_data_format, bool has_interpolation);
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override;

 private:
  std::vector<int64_t> size_;
  ops::ResizeMethod interpolation_ = ops::ResizeMethod::nearest;
};

}  // namespace kerascpp::layers
