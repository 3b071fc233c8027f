// keras.layers.CategoryEncoding(num_tokens, output_mode="multi_hot"): integer indices to one-hot,
// multi-hot or count rows (category_encoding.h).
#include "layers/preprocessing/category_encoding.h"

#include <cmath>

#include "layers/config_utils.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {

CategoryOutput category_output(const std::string& mode, const std::string& who) {
  if (mode == "int") return CategoryOutput::int_;
  if (mode == "one_hot") return CategoryOutput::one_hot;
  if (mode == "multi_hot") return CategoryOutput::multi_hot;
  if (mode == "count") return CategoryOutput::count;
  KCPP_THROW(ValueError, who, ": unknown `output_mode` '", mode, "' (int, one_hot, multi_hot, count; tf_idf needs "
             "adapted weights, which kerascpp does not support)");
}

Shape encoded_shape(const Shape& in, int64_t n, CategoryOutput mode) {
  if (mode == CategoryOutput::int_) return in;
  if (in.empty()) return {n};
  Shape out = in;
  if (mode == CategoryOutput::one_hot && (in.back() != 1 || in.size() == 1)) {
    out.push_back(n);
  } else {
    out.back() = n;
  }
  return out;
}

Tensor encode_categories(const Tensor& indices, int64_t n, CategoryOutput mode) {
  const Tensor x = indices.dtype() == DType::float32 ? indices : indices.astype(DType::float32);
  if (mode == CategoryOutput::int_) return x;
  Tensor y = Tensor::zeros(encoded_shape(x.shape(), n, mode));
  // one_hot: each index its own row; multi_hot / count: the last axis's indices share one.
  const int64_t per_row = mode == CategoryOutput::one_hot || x.rank() == 0 ? 1 : x.dim(-1);
  for (int64_t i = 0; i < x.size(); ++i) {
    const float v = x.data<float>()[i];
    if (!(v >= 0.f) || v >= static_cast<float>(n)) continue;  // as Keras: nothing for an index out of range
    float& cell = y.data<float>()[(i / per_row) * n + static_cast<int64_t>(std::trunc(v))];
    cell = mode == CategoryOutput::count ? cell + 1.f : 1.f;
  }
  return y;
}

namespace {

class CategoryEncoding : public Layer {
 public:
  explicit CategoryEncoding(Json given)
      : Layer(std::move(given)),
        num_tokens_(require<int64_t>(config(), "num_tokens")),
        mode_(category_output(get<std::string>(config(), "output_mode", "multi_hot"),
                              "Layer '" + name() + "' (CategoryEncoding)")) {
    KCPP_CHECK(num_tokens_ > 0, ValueError, "Layer '", name(), "' (CategoryEncoding): `num_tokens` must be positive. "
               "Received: num_tokens=", num_tokens_);
    KCPP_CHECK(mode_ != CategoryOutput::int_, ValueError, "Layer '", name(), "' (CategoryEncoding): unknown `output_mode` 'int'");
    KCPP_CHECK(!get<bool>(config(), "sparse", false), NotImplementedError, "Layer '", name(),
               "' (CategoryEncoding) with sparse=True is not supported (kerascpp's tensors are dense)");
  }
  std::string class_name() const override { return "CategoryEncoding"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {encoded_shape(in[0], num_tokens_, mode_)};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {encode_categories(in[0], num_tokens_, mode_)};
  }

 private:
  int64_t num_tokens_;
  CategoryOutput mode_;
};

}  // namespace
LayerPtr make_category_encoding(Json c) { return std::make_shared<CategoryEncoding>(std::move(c)); }
}  // namespace kerascpp::layers
