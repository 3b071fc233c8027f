// GradientTape: records (op, inputs, output, backward) while alive and walks them in reverse.
//
// Tensors are identified by the bytes they view: (first byte, byte count). An op's output is fresh
// storage, and the tape keeps every recorded tensor alive, so an address cannot be reused while the
// tape lives. A reshape() view has the same bytes and so the same identity (its gradient is
// reshaped back); a row slice() views other bytes and is a different, untracked tensor. A watched
// variable is tracked through every value() view of its storage.
#include <unordered_map>

#include "kerascpp/autodiff.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp {

namespace {
struct Key {
  const void* data;
  size_t nbytes;
  bool operator==(const Key& o) const { return data == o.data && nbytes == o.nbytes; }
};
struct KeyHash {
  size_t operator()(const Key& k) const { return std::hash<const void*>()(k.data) * 31 + k.nbytes; }
};
Key key_of(const Tensor& t) { return Key{t.raw_data(), t.nbytes()}; }
}  // namespace

struct GradientTape::Impl : ops::Recorder {
  struct Entry {
    Tensor value;  // keeps the bytes alive; its shape is the one gradients are returned in
  };
  struct Op {
    std::string_view name;
    std::vector<int> inputs;  // entry ids, -1 for untracked inputs
    int output;
    ops::Backward backward;
  };
  std::vector<Entry> entries;
  std::unordered_map<Key, int, KeyHash> ids;
  std::vector<Op> ops_;
  ops::Recorder* previous = nullptr;
  bool recording = true;
  bool persistent = true;
  bool answered = false;  // a tape that is not persistent answers once

  int find(const Tensor& t) const {
    if (!t.defined() || t.dtype() != DType::float32) return -1;
    auto it = ids.find(key_of(t));
    return it == ids.end() ? -1 : it->second;
  }
  int add(const Tensor& t) {
    int id = static_cast<int>(entries.size());
    entries.push_back({t});
    ids[key_of(t)] = id;
    return id;
  }
  // A tape that answered and is not persistent freed its tensors: it records nothing more (their
  // addresses may be reused).
  bool spent() const { return answered && !persistent; }
  bool tracks(const Tensor& t) const override { return !spent() && find(t) >= 0; }
  void record(std::string_view name, const std::vector<Tensor>& inputs, const Tensor& output,
              ops::Backward backward) override {
    if (spent()) return;
    Op op{name, {}, -1, std::move(backward)};
    bool any = false;
    for (const Tensor& t : inputs) {
      op.inputs.push_back(find(t));
      any = any || op.inputs.back() >= 0;
    }
    // An op that hands back one of its inputs unchanged (an identity) adds nothing to the graph.
    if (!any || find(output) >= 0) return;
    op.output = add(output);
    ops_.push_back(std::move(op));
  }
};

GradientTape::GradientTape() : GradientTape(true) {}

GradientTape::GradientTape(bool persistent) : impl_(std::make_unique<Impl>()) {
  impl_->persistent = persistent;
  impl_->previous = ops::set_active_recorder(impl_.get());
}

GradientTape::~GradientTape() {
  if (impl_->recording) ops::set_active_recorder(impl_->previous);
}

void GradientTape::stop_recording() {
  if (!impl_->recording) return;
  ops::set_active_recorder(impl_->previous);
  impl_->recording = false;
}

void GradientTape::watch(const Tensor& t) {
  KCPP_CHECK(t.defined() && t.dtype() == DType::float32, ValueError,
             "GradientTape.watch: only defined float32 tensors can be watched");
  if (impl_->find(t) < 0) impl_->add(t);
}
void GradientTape::watch(const VariablePtr& v) {
  KCPP_CHECK(v != nullptr, ValueError, "GradientTape.watch: received a null variable");
  if (v->dtype() == DType::float32) watch(v->value());
}
void GradientTape::watch(const std::vector<VariablePtr>& vs) {
  for (const auto& v : vs) watch(v);
}

size_t GradientTape::size() const { return impl_->ops_.size(); }

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           const Tensor& output_gradient) const {
  Impl& im = *impl_;
  KCPP_CHECK(im.persistent || !im.answered, ValueError, "GradientTape.gradient can only be called once on a tape "
             "that is not persistent (GradientTape(true) keeps what it recorded for more calls)");
  ops::NoRecord pause;
  const int root = im.find(target);
  std::vector<Tensor> grads(im.entries.size());
  // A gradient is complete once the op that made its tensor is reached (every consumer came later on
  // the tape); the sources' are kept to be returned, the others dropped there.
  std::vector<char> is_source(im.entries.size(), 0);
  for (const Tensor& s : sources)
    if (const int id = im.find(s); id >= 0) is_source[static_cast<size_t>(id)] = 1;
  if (root >= 0) {
    Tensor seed = output_gradient;
    if (!seed.defined()) {
      seed = Tensor::empty(target.shape());
      std::fill(seed.data<float>(), seed.data<float>() + seed.size(), 1.f);
    }
    KCPP_CHECK(seed.size() == target.size(), ValueError, "GradientTape.gradient: output_gradient has shape ",
               shape_str(seed.shape()), " but the target has shape ", shape_str(target.shape()));
    grads[root] = seed.reshape(im.entries[root].value.shape());
    ops::Backward taken;  // a tape that is not persistent: the op's backward, freed when the loop moves on
    for (size_t i = im.ops_.size(); i-- > 0;) {
      Impl::Op& op = im.ops_[i];
      if (!im.persistent) taken = std::move(op.backward);  // the previous op's activations go here
      const ops::Backward& backward = im.persistent ? op.backward : taken;
      if (grads[op.output].defined()) {
        ops::Grads g = backward(grads[op.output]);
        KCPP_ASSERT(g.size() == op.inputs.size());
        for (size_t k = 0; k < g.size(); ++k) {
          const int in = op.inputs[k];
          if (in < 0 || !g[k].defined()) continue;
          const Tensor& like = im.entries[in].value;
          KCPP_ASSERT(g[k].size() == like.size());
          Tensor gk = g[k].shape() == like.shape() ? g[k] : g[k].reshape(like.shape());
          grads[in] = grads[in].defined() ? ops::binary(ops::BinaryOp::add, grads[in], gk) : gk;
        }
      }
      if (!is_source[static_cast<size_t>(op.output)]) grads[op.output] = Tensor();
      if (!im.persistent) im.entries[op.output].value = Tensor();
    }
  } else {
    KCPP_CHECK(target.defined(), ValueError, "GradientTape.gradient: the target is an undefined tensor");
  }
  im.answered = true;
  std::vector<Tensor> out;
  out.reserve(sources.size());
  for (const Tensor& s : sources) {
    const int id = im.find(s);
    if (id < 0 || !grads[id].defined()) {
      out.emplace_back();
      continue;
    }
    out.push_back(grads[id].shape() == s.shape() ? grads[id] : grads[id].reshape(s.shape()));
  }
  return out;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<VariablePtr>& sources,
                                           const Tensor& output_gradient) const {
  std::vector<Tensor> views;
  views.reserve(sources.size());
  for (const auto& v : sources) views.push_back(v->value());
  return gradient(target, views, output_gradient);
}

}  // namespace kerascpp
