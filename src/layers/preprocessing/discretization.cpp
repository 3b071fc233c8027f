// keras.layers.Discretization(bin_boundaries, output_mode="int"): each value's bucket, the number of
// boundaries at or below it (tf.raw_ops.Bucketize), then encoded (category_encoding.h) over
// len(bin_boundaries) + 1 buckets. An adapted layer's boundaries are in its config.
#include <algorithm>

#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/preprocessing/category_encoding.h"

namespace kerascpp::layers {
namespace {

class Discretization : public Layer {
 public:
  explicit Discretization(Json given)
      : Layer(std::move(given)),
        mode_(category_output(get<std::string>(config(), "output_mode", "int"),
                              "Layer '" + name() + "' (Discretization)")) {
    KCPP_CHECK(config().contains("bin_boundaries") && config()["bin_boundaries"].is_array(),
               NotImplementedError, "Layer '", name(),
               "' (Discretization) has no `bin_boundaries` in its config (a layer never adapted)");
    boundaries_ = get<std::vector<float>>(config(), "bin_boundaries", {});
    KCPP_CHECK(
        std::is_sorted(boundaries_.begin(), boundaries_.end()), ValueError, "Layer '", name(),
        "' (Discretization): `bin_boundaries` must be sorted. Received: ", config()["bin_boundaries"].dump());
    KCPP_CHECK(!get<bool>(config(), "sparse", false), NotImplementedError, "Layer '", name(),
               "' (Discretization) with sparse=True is not supported (kerascpp's tensors are dense)");
  }
  std::string class_name() const override { return "Discretization"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {encoded_shape(in[0], static_cast<int64_t>(boundaries_.size()) + 1, mode_)};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor x = in[0].dtype() == DType::float32 ? in[0] : in[0].astype(DType::float32);
    Tensor bucket = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.size(); ++i)
      bucket.data<float>()[i] = static_cast<float>(
          std::upper_bound(boundaries_.begin(), boundaries_.end(), x.data<float>()[i]) - boundaries_.begin());
    return {encode_categories(bucket, static_cast<int64_t>(boundaries_.size()) + 1, mode_)};
  }

 private:
  CategoryOutput mode_;
  std::vector<float> boundaries_;
};

}  // namespace
LayerPtr make_discretization(Json c) { return std::make_shared<Discretization>(std::move(c)); }
}  // namespace kerascpp::layers
