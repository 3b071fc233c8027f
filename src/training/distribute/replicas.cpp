// fit's and evaluate's data-parallel side (replicas.h).
#include "training/distribute/replicas.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "kerascpp/error.h"

namespace kerascpp::training {
namespace {

// What must agree between workers before they train together: each weight's shape, dtype and
// trainability in order, the optimizer's variables, and the parameter count. Not the names: a model
// built twice in one process (workers as threads) is named dense_1 the second time.
struct Signature {
  std::string text;
  double count = 0, params = 0;
  void add(const Variable& v) {
    text += shape_str(v.shape()) + std::string(dtype_name(v.dtype())) + (v.trainable() ? "t;" : "n;");
    count += 1, params += static_cast<double>(v.value().size());
  }
};

std::vector<VariablePtr> everything(const Model& model, const Compiled* c) {
  std::vector<VariablePtr> vars = model.weights();
  if (c && c->optimizer && c->optimizer->built())
    for (const VariablePtr& v : c->optimizer->variables()) vars.push_back(v);
  return vars;
}

struct Pack : metrics::Metric::StateVisitor {
  std::vector<double>* out;
  explicit Pack(std::vector<double>* o) : out(o) {}
  void operator()(double& v) override { out->push_back(v); }
  void operator()(float& v) override { out->push_back(v); }
  void operator()(std::vector<double>& v) override { out->insert(out->end(), v.begin(), v.end()); }
  void operator()(std::vector<float>& v) override { out->insert(out->end(), v.begin(), v.end()); }
};

struct Unpack : metrics::Metric::StateVisitor {
  const double* p;
  explicit Unpack(const double* at) : p(at) {}
  void operator()(double& v) override { v = *p++; }
  void operator()(float& v) override { v = static_cast<float>(*p++); }
  void operator()(std::vector<double>& v) override {
    for (double& x : v) x = *p++;
  }
  void operator()(std::vector<float>& v) override {
    for (float& x : v) x = static_cast<float>(*p++);
  }
};

void each_tracker(Compiled& c, const std::function<void(metrics::Metric&)>& f) {
  f(c.loss_tracker);
  for (auto& t : c.output_loss_trackers) f(t);
  for (auto& per_output : c.metrics)
    for (auto& m : per_output) f(*m.metric);
}

}  // namespace

void Replicas::check_same_model(const Model& model, const Compiled* c, const char* what, bool optimizer) {
  if (!active()) return;
  KCPP_CHECK(!model.stateful(), NotImplementedError, what, " on ", ctx_->world_size(), " workers: model '", model.name(),
             "' has stateful RNN layers, whose states follow the rows of one process's batches; train it on one worker");
  Signature s;
  for (const VariablePtr& v : everything(model, optimizer ? c : nullptr)) s.add(*v);
  if (c) {  // the losses and the logged trackers: another metric would change the step's exchange
    for (const auto& loss : c->losses) s.text += (loss ? loss->class_name() : std::string("-")) + ";";
    for (const auto& t : c->output_loss_trackers) s.text += t.name() + ";";
    for (const auto& per_output : c->metrics)
      for (const auto& m : per_output) s.text += m.log_name + "/" + m.metric->class_name() + ";";
  }
  const uint64_t h = std::hash<std::string>{}(s.text);
  // Each worker's (hash high, hash low, weights, parameters) in its own slot; the sum gives everyone all.
  const size_t n = static_cast<size_t>(ctx_->world_size());
  std::vector<double> all(4 * n, 0.0);
  double* mine = all.data() + 4 * static_cast<size_t>(ctx_->rank());
  mine[0] = static_cast<double>(h >> 32), mine[1] = static_cast<double>(h & 0xffffffffu), mine[2] = s.count, mine[3] = s.params;
  ctx_->all_reduce_sum(all.data(), all.size());
  for (size_t r = 1; r < n; ++r) {
    const double* theirs = all.data() + 4 * r;
    if (std::equal(theirs, theirs + 4, all.data())) continue;
    KCPP_THROW(ValueError, what, " on ", n, " workers: worker ", r, "'s model differs from the chief's (worker 0): ",
               theirs[2], " weights and ", theirs[3], " parameters against ", all[2], " and ", all[3],
               theirs[2] == all[2] && theirs[3] == all[3] ? " (the same counts, other shapes or dtypes)" : "",
               ". Every worker builds or loads the same model and compiles it the same way");
  }
}

uint64_t Replicas::chief_seed(uint64_t own) {
  if (active()) ctx_->broadcast(&own, sizeof own, 0);
  return own;
}

void Replicas::take_chief_weights(const Model& model) {
  int unused = 0;
  take(everything(model, nullptr), &unused);
}

void Replicas::take_chief_state(const Model& model, Compiled& c, int* first_epoch) {
  take(everything(model, &c), first_epoch);
}

void Replicas::take(const std::vector<VariablePtr>& vars, int* first_epoch) {
  if (!active()) return;
  size_t bytes = sizeof(int64_t);
  for (const VariablePtr& v : vars) bytes += v->value().nbytes();
  std::vector<char> buf(bytes);
  int64_t epoch = *first_epoch;
  if (ctx_->is_chief()) {
    char* p = buf.data();
    std::memcpy(p, &epoch, sizeof epoch), p += sizeof epoch;
    for (const VariablePtr& v : vars) std::memcpy(p, v->value().raw_data(), v->value().nbytes()), p += v->value().nbytes();
  }
  ctx_->broadcast(buf.data(), buf.size(), 0);
  if (ctx_->is_chief()) return;
  const char* p = buf.data();
  std::memcpy(&epoch, p, sizeof epoch), p += sizeof epoch;
  *first_epoch = static_cast<int>(epoch);
  for (const VariablePtr& v : vars) {
    Tensor t = Tensor::empty(v->shape(), v->dtype());
    std::memcpy(t.raw_data(), p, t.nbytes()), p += t.nbytes();
    v->assign(t);
  }
}

Batch Replicas::local(const Batch& global) {
  if (!active()) return global;
  const int64_t n = global.x.at(0).dim(0), size = ctx_->world_size(), r = ctx_->rank();
  sized_ = sized_ || n >= size;  // every worker has rows of this batch (the same on all: n is global)
  const int64_t start = n * r / size, count = n * (r + 1) / size - start;
  Batch b;
  for (const Tensor& t : global.x) b.x.push_back(t.slice(start, count));
  for (const Tensor& t : global.y) b.y.push_back(t.slice(start, count));
  if (global.sample_weight.defined()) b.sample_weight = global.sample_weight.slice(start, count);
  return b;
}

std::vector<double> Replicas::trackers(Compiled& c) {
  std::vector<double> out;
  Pack pack(&out);
  each_tracker(c, [&](metrics::Metric& m) { m.visit_state(pack); });
  return out;
}

namespace {

// The summed accumulators as the logs read them; the worker's own go on from `own`.
Logs logs_of_sum(Compiled& c, const std::vector<double>& sum, const std::vector<double>& own) {
  Unpack in(sum.data());
  each_tracker(c, [&](metrics::Metric& m) { m.visit_state(in); });
  Logs logs = training::results(c);
  Unpack back(own.data());
  each_tracker(c, [&](metrics::Metric& m) { m.visit_state(back); });
  return logs;
}

}  // namespace

bool Replicas::reduce(Compiled& c, std::vector<Tensor>* grads, const std::vector<VariablePtr>& trainable,
                      std::vector<std::pair<VariablePtr, Tensor>>* updates, int64_t rows, int64_t global_rows,
                      bool finite, const std::vector<double>& tracked_before) {
  stopped_ = false;
  step_logs_.reset();
  if (!active()) return finite;
  if (!layout_known_) {  // the same on every worker: each sees the same global batch
    KCPP_CHECK(global_rows >= ctx_->world_size(), ValueError, "fit on ", ctx_->world_size(), " workers: the first "
               "global batch has ", global_rows, " sample(s), fewer than the workers; use a batch_size of at least ",
               ctx_->world_size());
    for (const auto& u : *updates) update_layout_.push_back(u.first);
    layout_known_ = true;
  } else if (rows > 0) {
    bool same = updates->size() == update_layout_.size();
    for (size_t i = 0; same && i < updates->size(); ++i) same = (*updates)[i].first == update_layout_[i];
    KCPP_CHECK(same, InternalError, "the layers' updates changed between training steps");
  }
  const bool has = finite && rows > 0;
  const float share = global_rows > 0 ? static_cast<float>(static_cast<double>(rows) / static_cast<double>(global_rows)) : 0.f;
  // The buffer: gradients, one flag per gradient, layer updates, [rows > 0], the trackers' accumulators
  // (each double as a float and its remainder), [global rows, their square], [stop requests], [losses
  // not finite].
  buffer_.clear();
  for (size_t i = 0; i < trainable.size(); ++i) {
    const size_t n = static_cast<size_t>(trainable[i]->value().size());
    const bool defined = has && i < grads->size() && (*grads)[i].defined();
    if (!defined) {
      buffer_.insert(buffer_.end(), n, 0.f);
      continue;
    }
    const Tensor g = (*grads)[i].dtype() == DType::float32 ? (*grads)[i] : (*grads)[i].astype(DType::float32);
    const float* p = g.data<float>();
    const size_t at = buffer_.size();
    buffer_.resize(at + n);
    for (size_t k = 0; k < n; ++k) buffer_[at + k] = p[k] * share;
  }
  for (size_t i = 0; i < trainable.size(); ++i) buffer_.push_back(has && i < grads->size() && (*grads)[i].defined() ? 1.f : 0.f);
  for (size_t j = 0; j < update_layout_.size(); ++j) {
    const size_t n = static_cast<size_t>(update_layout_[j]->value().size());
    if (!has) {
      buffer_.insert(buffer_.end(), n, 0.f);
      continue;
    }
    const Tensor& u = (*updates)[j].second;
    KCPP_CHECK(u.dtype() == DType::float32 && static_cast<size_t>(u.size()) == n, NotImplementedError,
               "data-parallel training averages float32 layer updates; variable '", update_layout_[j]->path(),
               "' is updated with ", dtype_name(u.dtype()), " values");
    const float* p = u.data<float>();
    buffer_.insert(buffer_.end(), p, p + n);
  }
  buffer_.push_back(has ? 1.f : 0.f);
  const size_t tracked_at = buffer_.size();
  const std::vector<double> tracked = sized_ ? trackers(c) : std::vector<double>();
  for (double v : tracked) {
    const float hi = static_cast<float>(v);
    buffer_.push_back(hi);
    buffer_.push_back(static_cast<float>(v - static_cast<double>(hi)));
  }
  const float g = static_cast<float>(global_rows);
  buffer_.push_back(g);
  buffer_.push_back(g * g);
  buffer_.push_back(stop_request_ ? 1.f : 0.f);
  buffer_.push_back(finite ? 0.f : 1.f);
  ctx_->all_reduce_sum(buffer_.data(), buffer_.size());
  // Every worker read a batch of the same size (their sum and sum of squares say so, the same on all).
  const double n = ctx_->world_size(), sum = buffer_[buffer_.size() - 4], squares = buffer_[buffer_.size() - 3];
  KCPP_CHECK(std::fabs(sum - n * g) <= 1e-6 * n * g && std::fabs(squares - n * g * g) <= 1e-5 * n * g * g, ValueError,
             "fit on ", ctx_->world_size(), " workers: the workers read batches of different sizes at this step (",
             global_rows, " samples here, ", sum / n, " on average): every worker passes the same data in the same "
             "order (a dataset that shuffles needs the same seed on every worker)");
  if (buffer_[buffer_.size() - 2] > 0.f) {  // a worker asked to stop after the previous batch: this one never ran
    if (trackers(c).size() == tracked_before.size()) {
      Unpack back(tracked_before.data());
      each_tracker(c, [&](metrics::Metric& m) { m.visit_state(back); });
    } else {  // a metric took its shape in this step, the pass's first that tracked here: nothing was before
      training::reset(c);
    }
    stopped_ = true;
    return false;
  }
  if (sized_) {
    std::vector<double> sum(tracked.size());
    for (size_t k = 0; k < sum.size(); ++k)
      sum[k] = static_cast<double>(buffer_[tracked_at + 2 * k]) + static_cast<double>(buffer_[tracked_at + 2 * k + 1]);
    step_logs_ = logs_of_sum(c, sum, tracked);
  }
  if (buffer_.back() > 0.f) return false;  // the loss was not finite on some worker: nobody updates
  const float* p = buffer_.data();
  const float* flags = p;
  for (const VariablePtr& v : trainable) flags += v->value().size();
  grads->resize(trainable.size());
  for (size_t i = 0; i < trainable.size(); ++i) {
    const int64_t n = trainable[i]->value().size();
    if (flags[i] > 0.f) {
      Tensor g = Tensor::empty(trainable[i]->shape());
      std::memcpy(g.raw_data(), p, static_cast<size_t>(n) * sizeof(float));
      (*grads)[i] = g;
    } else {
      (*grads)[i] = Tensor();
    }
    p += n;
  }
  p = flags + trainable.size();
  const float contributors = buffer_[tracked_at - 1];
  updates->clear();
  for (const VariablePtr& v : update_layout_) {
    const int64_t n = v->value().size();
    if (contributors > 0.f) {
      Tensor t = Tensor::empty(v->shape());
      float* q = t.data<float>();
      for (int64_t k = 0; k < n; ++k) q[k] = p[k] / contributors;
      updates->emplace_back(v, t);
    }
    p += n;
  }
  return true;
}

Logs Replicas::step_logs(Compiled& c) {
  if (step_logs_) return *step_logs_;
  return results(c);
}

Logs Replicas::results(Compiled& c) {
  if (!active()) return training::results(c);
  const std::vector<double> own = trackers(c);
  if (!sized_) {  // a worker may not have tracked yet: compare the sizes first
    double size[2] = {static_cast<double>(own.size()), -static_cast<double>(own.size())};
    ctx_->all_reduce_max(size, 2);
    KCPP_CHECK(size[0] == -size[1], ValueError, "The metrics' accumulators differ in size between the workers (",
               -size[1], " to ", size[0], " values): a worker had no rows in this pass of the data, which a metric such "
               "as AUC or F1Score needs to take its shape; give every worker rows (more samples than workers)");
  }
  std::vector<double> sum = own;
  ctx_->all_reduce_sum(sum.data(), sum.size());
  return logs_of_sum(c, sum, own);
}

bool Replicas::any(bool flag) {
  if (!active()) return flag;
  double v = flag ? 1.0 : 0.0;
  ctx_->all_reduce_max(&v, 1);
  return v > 0.0;
}

}  // namespace kerascpp::training
