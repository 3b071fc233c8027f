// keras.layers.Bidirectional (keras/src/layers/rnn/bidirectional.py): a recurrent layer run forwards
// and a copy (or the given backward_layer) run backwards, with go_backwards, over the same sequences;
// the backward outputs flipped back in time (with return_sequences) and merged: concat, sum, ave, mul
// or None (both, as two outputs). With return_state the forward states follow, then the backward
// ones; initial_state is split in halves. Both directions get the mask, and zero outputs at masked
// steps when they return sequences, as Keras forces. Keras 3 saves the weights under
// ".../forward_layer/cell/vars" and ".../backward_layer/cell/vars".
#include "core/naming.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/rnn/rnn.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

std::shared_ptr<Rnn> direction(const Json& spec, const std::string& who, const std::string& name, bool zero_output) {
  KCPP_CHECK(spec.is_object() && spec.contains("class_name") && spec["class_name"].is_string() &&
                 spec.contains("config") && spec["config"].is_object(),
             ValueError, who, ": `layer` must be a serialized recurrent layer. Received: ", spec.dump().substr(0, 200));
  Json c = spec["config"];
  c["name"] = name;
  c["zero_output_for_mask"] = zero_output;
  auto rnn = std::dynamic_pointer_cast<Rnn>(make_layer(spec["class_name"].get<std::string>(), c));
  KCPP_CHECK(rnn != nullptr, NotImplementedError, who, " wraps a ", spec["class_name"].get<std::string>(),
             " layer; kerascpp's Bidirectional takes SimpleRNN, LSTM, GRU, RNN and ConvLSTM1D/2D/3D");
  return rnn;
}

std::string without_prefix(std::string s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

class Bidirectional : public Layer {
 public:
  explicit Bidirectional(Json given) : Layer(std::move(given)) {
    const std::string who = "Layer '" + name() + "' (Bidirectional)";
    const Json merge = config().value("merge_mode", Json("concat"));
    KCPP_CHECK(merge.is_null() || merge == "concat" || merge == "sum" || merge == "ave" || merge == "mul", ValueError,
               who, ": Invalid merge mode. Received: ", merge.dump(),
               ". Merge mode should be one of {\"sum\", \"mul\", \"ave\", \"concat\", None}");
    merge_ = merge.is_null() ? "" : merge.get<std::string>();
    const Json layer = config().value("layer", Json());
    const bool sequences = layer.is_object() && layer.value("config", Json::object()).value("return_sequences", false);
    const std::string inner = layer.is_object() ? layer.value("config", Json::object()).value("name", std::string("rnn"))
                                                : std::string("rnn");
    forward_ = direction(layer, who, "forward_" + without_prefix(inner, "forward_"), sequences);
    if (config().contains("backward_layer") && !config()["backward_layer"].is_null()) {
      const Json& b = config()["backward_layer"];
      backward_ = direction(b, who, b.value("config", Json::object()).value("name", std::string("backward_rnn")), sequences);
    } else {
      Json b = layer;
      b["config"]["go_backwards"] = !forward_->go_backwards();
      backward_ = direction(b, who, "backward_" + without_prefix(inner, "forward_"), sequences);
    }
    KCPP_CHECK(!forward_->stateful() && !backward_->stateful(), NotImplementedError, who,
               ": stateful directions are not supported");
    KCPP_CHECK(forward_->go_backwards() != backward_->go_backwards(), ValueError, who,
               ": Forward layer and backward layer should have different `go_backwards` value");
    KCPP_CHECK(forward_->return_sequences() == backward_->return_sequences() &&
                   forward_->return_state() == backward_->return_state(),
               ValueError, who, ": Forward layer and backward layer are expected to have the same return_sequences "
               "and return_state");
  }
  std::string class_name() const override { return "Bidirectional"; }
  bool supports_masking() const override { return true; }
  std::vector<TensorArgument> tensor_arguments() const override { return {{"sequences"}, {"initial_state"}}; }
  std::vector<Layer*> sublayers() const override { return {forward_.get(), backward_.get()}; }
  std::vector<SaveableChildren> saveable_children() const override {
    return {{"forward_layer", {forward_.get()}, false}, {"backward_layer", {backward_.get()}, false}};
  }
  // A Keras 2 Bidirectional(CuDNNLSTM): each direction converts its own weights.
  std::vector<Tensor> from_legacy_layout(std::vector<Tensor> saved) const override {
    const size_t n = forward_->legacy_weights().size();
    if (saved.size() != n + backward_->legacy_weights().size()) return saved;  // the count check reports it
    std::vector<Tensor> f = forward_->from_legacy_layout({saved.begin(), saved.begin() + n});
    std::vector<Tensor> b = backward_->from_legacy_layout({saved.begin() + n, saved.end()});
    f.insert(f.end(), b.begin(), b.end());
    return f;
  }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    auto [fwd_in, bwd_in] = split(in);
    std::vector<Shape> f = forward_->compute_output_shape(fwd_in), b = backward_->compute_output_shape(bwd_in);
    std::vector<Shape> out;
    if (merge_.empty()) {
      out = {f[0], b[0]};
    } else {
      Shape y = f[0];
      if (merge_ == "concat") y.back() = f[0].back() + b[0].back();
      out = {y};
    }
    out.insert(out.end(), f.begin() + 1, f.end());
    out.insert(out.end(), b.begin() + 1, b.end());
    return out;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    auto [fwd_in, bwd_in] = split(in);
    std::vector<Tensor> f = forward_->run(fwd_in, ctx.mask(0), ctx), b = backward_->run(bwd_in, ctx.mask(0), ctx);
    Tensor y = f[0], y_rev = b[0];
    if (forward_->return_sequences()) y_rev = flip_time(y_rev);
    std::vector<Tensor> out;
    if (merge_.empty()) {
      out = {y, y_rev};
    } else if (merge_ == "concat") {
      out = {ops::concatenate({y, y_rev}, -1)};
    } else if (merge_ == "sum") {
      out = {ops::binary(ops::BinaryOp::add, y, y_rev)};
    } else if (merge_ == "ave") {
      out = {ops::scale_shift(ops::binary(ops::BinaryOp::add, y, y_rev), 0.5f, 0.f)};
    } else {
      out = {ops::binary(ops::BinaryOp::multiply, y, y_rev)};
    }
    out.insert(out.end(), f.begin() + 1, f.end());
    out.insert(out.end(), b.begin() + 1, b.end());
    return out;
  }

  std::vector<Tensor> compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>& masks) const override {
    const Tensor m = forward_->return_sequences() && !masks.empty() ? masks[0] : Tensor();
    std::vector<Tensor> out = merge_.empty() ? std::vector<Tensor>{m, m} : std::vector<Tensor>{m};
    if (forward_->return_state()) out.resize(out.size() + 2 * forward_->cell().state_count());
    return out;
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    auto [fwd_in, bwd_in] = split(in);
    forward_->build(fwd_in);
    backward_->build(bwd_in);
  }

 private:
  // The sequences for each direction, with its half of the initial states.
  template <typename T>
  std::pair<std::vector<T>, std::vector<T>> split(const std::vector<T>& in) const {
    KCPP_CHECK(!in.empty() && (in.size() - 1) % 2 == 0, ValueError, "Layer '", name(),
               "' (Bidirectional) takes the sequences and an even number of initial states. Received: ", in.size(),
               " tensors");
    const size_t half = (in.size() - 1) / 2;
    std::vector<T> f{in[0]}, b{in[0]};
    f.insert(f.end(), in.begin() + 1, in.begin() + 1 + half);
    b.insert(b.end(), in.begin() + 1 + half, in.end());
    return {f, b};
  }
  static Tensor flip_time(const Tensor& y) {
    Shape one_step = y.shape();  // (batch, 1, ...)
    one_step[1] = 1;
    std::vector<Tensor> steps;
    for (int64_t t = y.dim(1) - 1; t >= 0; --t) steps.push_back(time_step(y, t).reshape(one_step));
    return steps.empty() ? y : ops::concatenate(steps, 1);
  }

  std::string merge_;  // "" for None
  std::shared_ptr<Rnn> forward_, backward_;
};

}  // namespace
LayerPtr make_bidirectional(Json c) { return std::make_shared<Bidirectional>(std::move(c)); }
}  // namespace kerascpp::layers
