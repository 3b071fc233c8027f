#include "layers/reshaping/spatial_reshaping.h"

#include "layers/plan_parts.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {
namespace {

std::string pads_str(const Pads& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", (" : "(") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + ")";
  return s + (p.size() == 1 ? ",)" : ")");
}

}  // namespace

SpatialLayer::SpatialLayer(Json given, std::string cls, int dims, bool has_data_format)
    : Layer(std::move(given)), cls_(std::move(cls)), dims_(dims) {
  if (has_data_format) channels_first_ = channels_first_from(config(), who());
}

std::string SpatialLayer::who() const { return layer_who(name(), cls_); }

void SpatialLayer::expect_rank(const std::vector<Shape>& in) const {
  expect_inputs(in, 1);
  KCPP_CHECK(static_cast<int>(in[0].size()) == dims_ + 2, ValueError, "Input 0 of ", who(),
             " is incompatible with the layer: expected ndim=", dims_ + 2, ", found ndim=", in[0].size(),
             ". Full shape received: ", shape_str(in[0]));
}

ZeroPaddingBase::ZeroPaddingBase(Json given, std::string cls, int dims, Pads fallback)
    : SpatialLayer(std::move(given), std::move(cls), dims, true),
      padding_(pair_list(config(), "padding", dims, std::move(fallback), who())) {}

std::vector<Shape> ZeroPaddingBase::compute_output_shape(const std::vector<Shape>& in) const {
  expect_rank(in);
  Shape out = in[0];
  for (int i = 0; i < dims_; ++i) {
    int64_t& d = out[spatial_axis(i)];
    if (d >= 0) d += padding_[i].first + padding_[i].second;
  }
  return {out};
}

Pads ZeroPaddingBase::pads(int rank) const {
  Pads all(rank, {0, 0});
  for (int i = 0; i < dims_; ++i) all[spatial_axis(i)] = padding_[i];
  return all;
}

std::vector<Tensor> ZeroPaddingBase::call(const std::vector<Tensor>& in, const CallContext&) const {
  expect_rank({in[0].shape()});
  return {ops::pad(in[0], pads(in[0].rank()))};
}

bool zero_padding_parts(const Layer& layer, int rank, Pads* pads) {
  const auto* zp = dynamic_cast<const ZeroPaddingBase*>(&layer);
  if (!zp || rank != zp->dims() + 2) return false;
  *pads = zp->pads(rank);
  return true;
}

CroppingBase::CroppingBase(Json given, std::string cls, int dims, Pads fallback)
    : SpatialLayer(std::move(given), std::move(cls), dims, dims > 1),
      cropping_(pair_list(config(), "cropping", dims, std::move(fallback), who())) {}

std::vector<Shape> CroppingBase::compute_output_shape(const std::vector<Shape>& in) const {
  expect_rank(in);
  Shape out = in[0];
  for (int i = 0; i < dims_; ++i) {
    int64_t& d = out[spatial_axis(i)];
    if (d < 0) continue;
    KCPP_CHECK(
        cropping_[i].first + cropping_[i].second < d, ValueError, "Values in `cropping` argument of ", who(),
        " should be smaller than the corresponding spatial dimension of the input. Received: input_shape=",
        shape_str(in[0]), ", cropping=", pads_str(cropping_));
    d -= cropping_[i].first + cropping_[i].second;
  }
  return {out};
}

std::vector<Tensor> CroppingBase::call(const std::vector<Tensor>& in, const CallContext&) const {
  const Shape out = compute_output_shape({in[0].shape()})[0];
  std::vector<int64_t> begin(out.size(), 0);
  for (int i = 0; i < dims_; ++i) begin[spatial_axis(i)] = cropping_[i].first;
  return {ops::slice(in[0], begin, out)};
}

UpSamplingBase::UpSamplingBase(Json given, std::string cls, int dims, bool has_data_format,
                               bool has_interpolation)
    : SpatialLayer(std::move(given), std::move(cls), dims, has_data_format),
      size_(int_tuple(config(), "size", dims, std::vector<int64_t>(dims, 2), 1, who())) {
  if (has_interpolation) interpolation_ = resize_method_from(config(), "interpolation", "nearest", who());
}

std::vector<Shape> UpSamplingBase::compute_output_shape(const std::vector<Shape>& in) const {
  expect_rank(in);
  Shape out = in[0];
  for (int i = 0; i < dims_; ++i) {
    int64_t& d = out[spatial_axis(i)];
    if (d >= 0) d *= size_[i];
  }
  return {out};
}

std::vector<Tensor> UpSamplingBase::call(const std::vector<Tensor>& in, const CallContext&) const {
  expect_rank({in[0].shape()});
  const Tensor& x = in[0];
  if (interpolation_ != ops::ResizeMethod::nearest) {  // UpSampling2D only: Keras's ops.image.resize
    return {ops::resize(x, x.dim(spatial_axis(0)) * size_[0], x.dim(spatial_axis(1)) * size_[1],
                        interpolation_, channels_first_)};
  }
  std::vector<int64_t> repeats(x.rank(), 1);
  for (int i = 0; i < dims_; ++i) repeats[spatial_axis(i)] = size_[i];
  return {ops::repeat(x, repeats)};
}

}  // namespace kerascpp::layers
