// keras.layers.IntegerLookup (keras/src/layers/preprocessing/index_lookup.py): integer tokens to
// vocabulary indices, or back with invert=True. Indices: [mask (int output with a mask_token)]
// [num_oov_indices OOV slots] [the vocabulary's tokens, in order]. A token outside the vocabulary takes
// the OOV slot (several: token floormod n, or its FarmHash / SipHash with oov_method="farmhash"); the
// mask_token is index 0 (dropped by the other output modes). The indices are then encoded
// (category_encoding.h); tf_idf is refused (Keras keeps its idf weights as a named variable). The
// vocabulary is the config's, or an adapted layer's vocabulary.txt from a .keras archive's assets
// (load_assets), which the layer's saved config then holds.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/preprocessing/category_encoding.h"
#include "layers/preprocessing/string_hash.h"

namespace kerascpp::layers {
namespace {

class IntegerLookup : public Layer {
 public:
  explicit IntegerLookup(Json given)
      : Layer(std::move(given)),
        invert_(get<bool>(config(), "invert", false)),
        num_oov_(get<int64_t>(config(), "num_oov_indices", 1)),
        oov_token_(get<int64_t>(config(), "oov_token", -1)),
        pad_(get<bool>(config(), "pad_to_max_tokens", false)) {
    const std::string mode = get<std::string>(config(), "output_mode", "int");
    KCPP_CHECK(mode != "tf_idf", NotImplementedError, who(), " has output_mode='tf_idf', which kerascpp does not "
               "support: Keras keeps its idf weights as a variable named idf_weights, outside the weights' order");
    mode_ = category_output(mode, who());
    const Json max_tokens = config().value("max_tokens", Json()), mask = config().value("mask_token", Json());
    if (!max_tokens.is_null()) max_tokens_ = get<int64_t>(config(), "max_tokens", 0);
    if (!mask.is_null()) mask_token_ = get<int64_t>(config(), "mask_token", 0);
    KCPP_CHECK(!max_tokens_ || *max_tokens_ > 1, ValueError, who(), ": If set, `max_tokens` must be greater than 1. "
               "Received: max_tokens=", max_tokens.dump());
    KCPP_CHECK(num_oov_ >= 0, ValueError, who(), ": `num_oov_indices` must be greater than or equal to 0. Received: ",
               num_oov_);
    KCPP_CHECK(!invert_ || mode_ == CategoryOutput::int_, ValueError, who(),
               ": `output_mode` must be `'int'` when `invert` is true. Received: output_mode=", mode);
    KCPP_CHECK(!pad_ || max_tokens_, ValueError, who(), ": pad_to_max_tokens=True needs `max_tokens`");
    KCPP_CHECK(
        get<std::string>(config(), "vocabulary_dtype", "int64") == "int64", ValueError, who(),
        ": Only `vocabulary_dtype='int64'` is supported. Received: ", config()["vocabulary_dtype"].dump());
    KCPP_CHECK(!get<bool>(config(), "sparse", false), NotImplementedError, who(),
               " with sparse=True is not supported (kerascpp's tensors are dense)");
    const std::string method = get<std::string>(config(), "oov_method", "floormod");
    KCPP_CHECK(method == "floormod" || method == "farmhash", ValueError, who(),
               ": Invalid value for argument `oov_method`: expected 'floormod' or 'farmhash'. Received: ", method);
    farmhash_ = method == "farmhash";
    hash_ = IntegerHash::from_salt(config().value("salt", Json()), who());
    KCPP_CHECK(!hash_.strong || farmhash_, ValueError, who(), ": `salt` can only be used when `oov_method='farmhash'`");
    if (config().contains("vocabulary_size") && config()["vocabulary_size"].is_number_integer())
      vocabulary_size_ = config()["vocabulary_size"].get<int64_t>();
    const Json vocabulary = config().value("vocabulary", Json());
    KCPP_CHECK(!vocabulary.is_string(), NotImplementedError, who(), " names a vocabulary file (",
               vocabulary.dump(), "): kerascpp never reads files a model names; give the vocabulary as a list");
    if (!vocabulary.is_null())
      set_vocabulary(get<std::vector<int64_t>>(config(), "vocabulary", {}), "its config");
    for (int64_t t : {oov_token_, mask_token_.value_or(0)})
      KCPP_CHECK(!invert_ || std::llabs(t) <= kExactFloatIntegers, NotImplementedError, who(), " inverts to token ",
                 t, ": kerascpp's tensors are float32, exact for integers up to 2^24");
  }
  std::string class_name() const override { return "IntegerLookup"; }

  void load_assets(const std::map<std::string, std::string>& files) override {
    auto it = files.find("vocabulary.txt");
    if (have_vocabulary_ || it == files.end()) return;
    std::vector<std::string> lines;  // Python's splitlines(), then the trailing empty lines dropped
    std::istringstream text(it->second);
    for (std::string line; std::getline(text, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    std::vector<int64_t> vocabulary;
    for (size_t n = 1; n <= lines.size(); ++n) {
      const std::string& line = lines[n - 1];
      size_t used = 0;
      try {
        vocabulary.push_back(std::stoll(line, &used));
      } catch (const std::exception&) {
        used = 0;
      }
      KCPP_CHECK(!line.empty() && used == line.size(), ValueError, who(), ": line ", n, " of its vocabulary.txt asset is not an integer: '",
                 line.substr(0, 40), "'");
    }
    set_vocabulary(vocabulary, "its vocabulary.txt asset");
    from_assets_ = vocabulary;
  }
  Json get_config() const override {
    Json c = config_;
    c.update(config_from_assets());
    return c;
  }
  Json config_from_assets() const override {
    return from_assets_.empty() ? Json::object() : Json{{"vocabulary", from_assets_}};
  }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {mode_ == CategoryOutput::int_ ? in[0] : encoded_shape(in[0], depth(), mode_)};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    KCPP_CHECK(have_vocabulary_, ValueError, who(), " has no vocabulary: its config holds none and the file no "
               "vocabulary.txt asset (an adapted layer saved as .h5 loses its vocabulary; Keras would map every "
               "value to the OOV index). Save the model as .keras, or pass `vocabulary=` to the layer");
    const Tensor x = in[0].dtype() == DType::float32 ? in[0] : in[0].astype(DType::float32);
    Tensor y = Tensor::empty(x.shape());
    std::vector<int64_t> unknown;
    for (int64_t i = 0; i < x.size(); ++i) {
      const float f = x.data<float>()[i];
      const int64_t v = tf_cast_int64(f);  // tf.cast to the int64 keys truncates
      KCPP_CHECK(v != INT64_MIN, ValueError, who(), " received ", f, ", which is not an int64 token");
      y.data<float>()[i] = static_cast<float>(invert_ ? token_of(v) : index_of(v, &unknown));
    }
    KCPP_CHECK(unknown.empty(), ValueError, who(), ": When `num_oov_indices=0` all inputs should be in vocabulary, "
               "found OOV values ", Json(unknown).dump(), ", consider setting `num_oov_indices=1`.");
    return {mode_ == CategoryOutput::int_ ? y : encode_categories(y, depth(), mode_)};
  }

 private:
  std::string who() const { return "Layer '" + name() + "' (IntegerLookup)"; }
  int64_t oov_start() const { return mask_token_ && mode_ == CategoryOutput::int_ ? 1 : 0; }
  int64_t token_start() const { return oov_start() + num_oov_; }
  int64_t depth() const {
    if (pad_) return *max_tokens_;
    KCPP_CHECK(vocabulary_size_ > 0, ValueError, who(), " has output_mode other than 'int' and no vocabulary_size");
    return vocabulary_size_;
  }

  // Keras's set_vocabulary: the special tokens may lead the list (an asset always has them).
  void set_vocabulary(const std::vector<int64_t>& vocabulary, const char* from) {
    KCPP_CHECK(!vocabulary.empty(), ValueError, who(), ": Cannot set an empty vocabulary (from ", from, ")");
    std::vector<int64_t> special(static_cast<size_t>(oov_start()), mask_token_.value_or(0));
    special.insert(special.end(), static_cast<size_t>(num_oov_), oov_token_);
    const bool found = vocabulary.size() >= special.size() && std::equal(special.begin(), special.end(), vocabulary.begin());
    tokens_.assign(vocabulary.begin() + (found ? static_cast<std::ptrdiff_t>(special.size()) : 0), vocabulary.end());
    index_.clear();
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const int64_t t = tokens_[i];
      KCPP_CHECK(index_.emplace(t, token_start() + static_cast<int64_t>(i)).second, ValueError, who(),
                 ": The passed vocabulary has at least one repeated term. Please uniquify your dataset. The repeated "
                 "terms are: [", t, "] (from ", from, ")");
      KCPP_CHECK(!mask_token_ || t != *mask_token_, ValueError, who(), ": Found reserved mask token at unexpected "
                 "location in `vocabulary` (from ", from, "). Received: mask_token=", *mask_token_);
      KCPP_CHECK(!invert_ || t != oov_token_, ValueError, who(), ": Found reserved OOV token at unexpected location "
                 "in `vocabulary` (from ", from, "). Received: oov_token=", oov_token_);
      KCPP_CHECK(!invert_ || std::llabs(t) <= kExactFloatIntegers, NotImplementedError, who(), " inverts to token ", t,
                 ": kerascpp's tensors are float32, exact for integers up to 2^24");
    }
    const int64_t size = token_start() + static_cast<int64_t>(tokens_.size());
    KCPP_CHECK(!max_tokens_ || size <= *max_tokens_, ValueError, who(), ": Attempted to set a vocabulary larger than "
               "the maximum vocab size. Received vocabulary size is ", size, "; `max_tokens` is ", *max_tokens_, ".");
    KCPP_CHECK(vocabulary_size_ < 0 || vocabulary_size_ == size, ValueError, who(), ": its config's vocabulary_size ",
               vocabulary_size_, " differs from its vocabulary's ", size, " (from ", from, ")");
    vocabulary_size_ = size;
    have_vocabulary_ = true;
  }

  int64_t index_of(int64_t v, std::vector<int64_t>* unknown) const {
    if (mask_token_ && v == *mask_token_) return mode_ == CategoryOutput::int_ ? 0 : -1;  // -1: dropped
    if (auto it = index_.find(v); it != index_.end()) return it->second;
    if (num_oov_ == 0) {
      unknown->push_back(v);
      return -1;
    }
    if (num_oov_ == 1) return oov_start();
    const int64_t slot = farmhash_ ? hash_.bucket(v, num_oov_) : ((v % num_oov_) + num_oov_) % num_oov_;
    return oov_start() + slot;
  }
  int64_t token_of(int64_t index) const {
    if (mask_token_ && index == 0) return *mask_token_;
    const int64_t i = index - token_start();
    return i >= 0 && i < static_cast<int64_t>(tokens_.size()) ? tokens_[static_cast<size_t>(i)] : oov_token_;
  }

  bool invert_, farmhash_ = false, have_vocabulary_ = false;
  int64_t num_oov_, oov_token_;
  bool pad_;
  CategoryOutput mode_ = CategoryOutput::int_;
  std::optional<int64_t> max_tokens_, mask_token_;
  IntegerHash hash_;
  int64_t vocabulary_size_ = -1;
  std::vector<int64_t> tokens_, from_assets_;
  std::unordered_map<int64_t, int64_t> index_;
};

}  // namespace
LayerPtr make_integer_lookup(Json c) { return std::make_shared<IntegerLookup>(std::move(c)); }
}  // namespace kerascpp::layers
