// keras.layers.Hashing(num_bins, mask_value=None, salt=None, output_mode="int"): each value's bin, the
// hash of its decimal form (tf.strings.as_string; floats are first cast to int64) modulo num_bins
// (string_hash.h: FarmHash, or SipHash keyed by `salt`). With a mask_value, that value is bin 0 and the
// others hash into bins 1..num_bins-1. The bins are then encoded (category_encoding.h). Integers only:
// Keras's string inputs need a string tensor type kerascpp does not have.
#include <cmath>

#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/preprocessing/category_encoding.h"
#include "layers/preprocessing/string_hash.h"

namespace kerascpp::layers {
namespace {

class Hashing : public Layer {
 public:
  explicit Hashing(Json given)
      : Layer(std::move(given)),
        num_bins_(require<int64_t>(config(), "num_bins")),
        mode_(category_output(get<std::string>(config(), "output_mode", "int"), who())),
        hash_(IntegerHash::from_salt(config().value("salt", Json()), who())) {
    KCPP_CHECK(num_bins_ > 0, ValueError, who(), ": The `num_bins` for `Hashing` cannot be `None` or non-positive values. "
               "Received: num_bins=", num_bins_);
    KCPP_CHECK(num_bins_ <= kExactFloatIntegers, NotImplementedError, who(), " has num_bins=", num_bins_,
               ": kerascpp's bins are float32, exact up to 2^24");
    KCPP_CHECK(!get<bool>(config(), "sparse", false), NotImplementedError, who(),
               " with sparse=True is not supported (kerascpp's tensors are dense)");
    const Json mask = config().value("mask_value", Json());
    if (!mask.is_null()) {
      KCPP_CHECK(mask.is_number(), NotImplementedError, who(), " has mask_value=", mask.dump(),
                 ": kerascpp hashes numbers only (string values need a string tensor type)");
      mask_ = mask.get<double>();
    }
  }
  std::string class_name() const override { return "Hashing"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {encoded_shape(in[0], num_bins_, mode_)};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor x = in[0].dtype() == DType::float32 ? in[0] : in[0].astype(DType::float32);
    const bool masking = mask_.has_value() && num_bins_ > 1;
    const int64_t bins = masking ? num_bins_ - 1 : num_bins_;
    Tensor y = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.size(); ++i) {
      const float v = x.data<float>()[i];
      KCPP_CHECK(tf_cast_int64(v) != INT64_MIN, ValueError, who(), " received ", v, ", which has no int64 value to hash");
      if (masking && v == static_cast<float>(*mask_)) {  // compared in the input's dtype, as tf.equal
        y.data<float>()[i] = 0.f;
        continue;
      }
      const int64_t b = hash_.bucket(tf_cast_int64(v), bins);
      y.data<float>()[i] = static_cast<float>(masking ? b + 1 : b);
    }
    return {encode_categories(y, num_bins_, mode_)};
  }

 private:
  std::string who() const { return "Layer '" + name() + "' (Hashing)"; }
  int64_t num_bins_;
  CategoryOutput mode_;
  IntegerHash hash_;
  std::optional<double> mask_;
};

}  // namespace
LayerPtr make_hashing(Json c) { return std::make_shared<Hashing>(std::move(c)); }
}  // namespace kerascpp::layers
