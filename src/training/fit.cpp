// model.fit / evaluate / train_on_batch / test_on_batch (keras/src/backend/tensorflow/trainer.py and
// keras/src/trainers/trainer.py): data checks, validation split, shuffling, class weights, batches,
// callbacks and History.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "models/functional.h"
#include "training/compiled.h"

namespace kerascpp {
namespace {

using training::Batch;
using training::Compiled;

Compiled& compiled_or_throw(const Model& m, Compiled* c, const char* what) {
  KCPP_CHECK(c != nullptr, ValueError, "You must call `compile()` before using the model (", what, " on model '",
             m.name(), "').");
  return *c;
}

// The number of samples, checked to agree across x, y and sample_weight (Keras's message).
int64_t cardinality(const Model& m, const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sw) {
  KCPP_CHECK(x.size() == m.input_shapes().size(), ValueError, "Model '", m.name(), "' expects ", m.input_shapes().size(),
             " input(s), but it received ", x.size(), " input arrays.");
  KCPP_CHECK(y.size() == m.output_shapes().size(), ValueError, "Model '", m.name(), "' has ", m.output_shapes().size(),
             " output(s), but it received ", y.size(), " target arrays.");
  std::string xs, ys;
  bool same = true;
  int64_t n = -1;
  auto visit = [&](const Tensor& t, std::string* sizes, const char* what) {
    KCPP_CHECK(t.defined() && t.rank() >= 1, ValueError, "Every ", what, " array needs a batch axis. Received: shape=",
               shape_str(t.defined() ? t.shape() : Shape{}));
    *sizes += (sizes->empty() ? "" : ", ") + std::to_string(t.dim(0));
    same = same && (n < 0 || t.dim(0) == n);
    n = t.dim(0);
  };
  for (const Tensor& t : x) visit(t, &xs, "input");
  for (const Tensor& t : y) visit(t, &ys, "target");
  std::string sws;
  if (sw.defined()) visit(sw, &sws, "sample_weight");
  KCPP_CHECK(same, ValueError, "Data cardinality is ambiguous. Make sure all arrays contain the same number of samples.'x' "
             "sizes: ", xs, " 'y' sizes: ", ys, sw.defined() ? " 'sample_weight' sizes: " + sws : std::string());
  return n;
}

// Keras's class_weight: each sample weighted by the weight of its class (the label, or the argmax
// of a one-hot / probability row), times sample_weight when both are given.
Tensor weights_for(const Tensor& y, const std::map<int64_t, double>& class_weight, const Tensor& sample_weight) {
  if (class_weight.empty()) return sample_weight;
  const int64_t n = y.dim(0), width = n > 0 ? y.size() / n : 0;
  Tensor yf = y.dtype() == DType::float32 ? y : y.astype(DType::float32);
  const Tensor sw = !sample_weight.defined() || sample_weight.dtype() == DType::float32
                        ? sample_weight : sample_weight.astype(DType::float32);
  Tensor w = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) {
    const float* row = yf.data<float>() + i * width;
    int64_t cls = width == 1 ? static_cast<int64_t>(std::lround(row[0]))
                             : static_cast<int64_t>(std::max_element(row, row + width) - row);
    auto it = class_weight.find(cls);
    KCPP_CHECK(it != class_weight.end(), ValueError, "Expected `class_weight` to specify a weight for every class. "
               "Received: class_weight has no weight for class ", cls);
    const float s = sw.defined() ? sw.data<float>()[i] : 1.f;
    w.data<float>()[i] = static_cast<float>(it->second) * s;
  }
  return w;
}

Batch batch_of(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sw,
               const std::vector<int64_t>* order, int64_t start, int64_t count) {
  Batch b;
  for (const Tensor& t : x) b.x.push_back(training::take_rows(t, order, start, count));
  for (const Tensor& t : y) b.y.push_back(training::take_rows(t, order, start, count));
  if (sw.defined()) b.sample_weight = training::take_rows(sw, order, start, count);
  return b;
}

struct CallbackList {
  std::vector<callbacks::CallbackPtr> all;
  template <typename F>
  void each(F f) {
    for (auto& c : all) f(*c);
  }
};

CallbackList make_callbacks(Model& m, const std::vector<callbacks::CallbackPtr>& user, int verbose, int epochs, int64_t steps,
                            std::ostream* out, std::shared_ptr<callbacks::History>* history) {
  // Keras's order: the user's callbacks, then History, then the progress bar (so that what a
  // callback adds to the logs, e.g. ReduceLROnPlateau's learning_rate, reaches both).
  CallbackList list;
  list.all = user;
  if (history) {
    *history = std::make_shared<callbacks::History>();
    list.all.push_back(*history);
  }
  if (verbose > 0) list.all.push_back(std::make_shared<callbacks::ProgbarLogger>(out));
  for (auto& c : list.all) {
    KCPP_CHECK(c != nullptr, ValueError, "Received a null callback");
    c->set_model(&m);
    c->set_params(callbacks::Params{epochs, steps, verbose});
  }
  return list;
}

// Keras hands callbacks their logs sorted by key (keras/src/callbacks/callback_list.py).
Logs sorted(const Logs& logs) {
  auto items = logs.items();
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Logs out;
  for (const auto& [k, v] : items) out.set(k, v);
  return out;
}

bool has_terminate_on_nan(const std::vector<callbacks::CallbackPtr>& cbs) {
  for (const auto& c : cbs)
    if (dynamic_cast<const callbacks::TerminateOnNaN*>(c.get())) return true;
  return false;
}

// The evaluation loop shared by evaluate() and fit's validation.
Logs run_evaluation(Model& m, Compiled& c, const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sw,
                    int64_t batch_size, CallbackList& cbs, RnnStates* states) {
  const int64_t n = cardinality(m, x, y, sw);
  training::reset(c);
  Logs logs;
  cbs.each([&](callbacks::Callback& cb) { cb.on_test_begin(logs); });
  int64_t step = 0;
  for (int64_t start = 0; start < n; start += batch_size, ++step) {
    cbs.each([&](callbacks::Callback& cb) { cb.on_test_batch_begin(step, logs); });
    training::test_step(m, c, batch_of(x, y, sw, nullptr, start, std::min(batch_size, n - start)), states);
    logs = sorted(training::results(c));
    cbs.each([&](callbacks::Callback& cb) { cb.on_test_batch_end(step, logs); });
  }
  logs = sorted(training::results(c));
  cbs.each([&](callbacks::Callback& cb) { cb.on_test_end(logs); });
  return logs;
}

// A stateful model trains and evaluates with the caller's states, in batches of its fixed batch size
// (one state per row): batch_size must be that size and the samples whole batches of it.
void check_states(const Model& m, RnnStates* states, const char* what, const char* option, int64_t n, int64_t batch) {
  if (!m.stateful()) return;
  KCPP_CHECK(states != nullptr, ValueError, "Model '", m.name(), "' has stateful RNN layers: ", what, " needs the "
             "states they carry from batch to batch (C++: ", option, " = &states, a kerascpp::RnnStates; Python keeps "
             "them per model)");
  const int64_t fixed = m.input_shapes().at(0).at(0);  // a stateful layer needs it (layers/rnn/rnn.cpp)
  KCPP_CHECK(fixed <= 0 || (batch == fixed && n % fixed == 0), ValueError, "Model '", m.name(), "' has stateful RNN "
             "layers, which keep one state per row of its fixed batch of ", fixed, ": ", what, " needs batch_size=", fixed,
             " and whole batches of it. Received: batch_size=", batch, " and ", n, " samples");
}

}  // namespace

std::shared_ptr<callbacks::History> Model::fit(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in,
                                               const FitOptions& o) {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "fit");
  KCPP_CHECK(o.batch_size > 0, ValueError, "Expected a positive batch_size. Received: batch_size=", o.batch_size);
  KCPP_CHECK(o.epochs >= 0 && o.initial_epoch >= 0, ValueError, "Expected non-negative epochs and initial_epoch. Received: epochs=",
             o.epochs, ", initial_epoch=", o.initial_epoch);
  KCPP_CHECK(o.validation_split >= 0 && o.validation_split < 1, ValueError,
             "`validation_split` must be in the range [0, 1). Received: validation_split=", o.validation_split);
  const int64_t total = cardinality(*this, x_in, y_in, o.sample_weight);
  for (size_t i = 0; i < y_in.size(); ++i)
    KCPP_CHECK(!c.losses[i] || y_in[i].rank() >= 1, ValueError, "Invalid target for output ", i);
  // validation_data wins over validation_split; the split takes the last samples, before shuffling.
  std::vector<Tensor> x = x_in, y = y_in, vx = o.validation_x, vy = o.validation_y;
  Tensor sw = weights_for(y_in[0], o.class_weight, o.sample_weight), vsw = o.validation_sample_weight;
  int64_t n = total;
  if (vx.empty() && o.validation_split > 0) {
    const int64_t split = static_cast<int64_t>(std::floor(static_cast<double>(total) * (1.0 - o.validation_split)));
    KCPP_CHECK(split > 0 && split < total, ValueError, "Training data contains ", total, " samples, which is not sufficient "
               "to split it into a validation and training set as specified by `validation_split=", o.validation_split, "`.");
    for (auto* v : {&x, &y})
      for (Tensor& t : *v) t = t.slice(0, split);
    for (const Tensor& t : x_in) vx.push_back(t.slice(split, total - split));
    for (const Tensor& t : y_in) vy.push_back(t.slice(split, total - split));
    if (sw.defined()) {
      vsw = sw.slice(split, total - split);
      sw = sw.slice(0, split);
    }
    n = split;
  }
  if (!vx.empty()) cardinality(*this, vx, vy, vsw);
  KCPP_CHECK(n > 0, ValueError, "Expected input data to be non-empty.");
  check_states(*this, o.states, "fit", "FitOptions::states", n, o.batch_size);
  if (!vx.empty()) check_states(*this, o.states, "fit's validation", "FitOptions::states", vx[0].dim(0), o.batch_size);
  const int64_t steps = (n + o.batch_size - 1) / o.batch_size;
  std::shared_ptr<callbacks::History> history;
  CallbackList cbs = make_callbacks(*this, o.callbacks, o.verbose, o.epochs, steps, o.out, &history);
  const bool nan_stops = has_terminate_on_nan(o.callbacks);
  std::mt19937_64 rng(o.seed ? o.seed : std::random_device{}());
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  c.optimizer->build(training::trainable_weights(*this, c));
  stop_training = false;
  Logs logs;
  cbs.each([&](callbacks::Callback& cb) { cb.on_train_begin(logs); });
  for (int epoch = o.initial_epoch; epoch < o.epochs && !stop_training; ++epoch) {
    training::reset(c);
    Logs epoch_logs;
    cbs.each([&](callbacks::Callback& cb) { cb.on_epoch_begin(epoch, epoch_logs); });
    if (o.shuffle) std::shuffle(order.begin(), order.end(), rng);
    for (int64_t step = 0; step < steps && !stop_training; ++step) {
      const int64_t start = step * o.batch_size, count = std::min(o.batch_size, n - start);
      Logs batch_logs;
      cbs.each([&](callbacks::Callback& cb) { cb.on_train_batch_begin(step, batch_logs); });
      const bool finite =
          training::train_step(*this, c, batch_of(x, y, sw, o.shuffle ? &order : nullptr, start, count), rng(), o.states);
      batch_logs = sorted(training::results(c));
      if (!finite && !nan_stops)
        KCPP_THROW(ValueError, "The loss of model '", name(), "' is ", batch_logs.at("loss"), " at epoch ", epoch + 1,
                   ", batch ", step, ". The weights were left as they were before this batch. Lower the learning rate, "
                   "check the data for NaN / inf, or pass keras.callbacks.TerminateOnNaN() to stop training instead.");
      cbs.each([&](callbacks::Callback& cb) { cb.on_train_batch_end(step, batch_logs); });
    }
    epoch_logs = training::results(c);
    if (!vx.empty() && !stop_training) {
      Logs val = run_evaluation(*this, c, vx, vy, vsw, o.batch_size, cbs, o.states);
      for (const auto& [k, v] : val.items()) epoch_logs.set("val_" + k, v);
    }
    epoch_logs = sorted(epoch_logs);
    cbs.each([&](callbacks::Callback& cb) { cb.on_epoch_end(epoch, epoch_logs); });
    logs = epoch_logs;
  }
  cbs.each([&](callbacks::Callback& cb) { cb.on_train_end(logs); });
  return history;
}

Logs Model::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const EvaluateOptions& o) {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "evaluate");
  KCPP_CHECK(o.batch_size > 0, ValueError, "Expected a positive batch_size. Received: batch_size=", o.batch_size);
  const int64_t n = cardinality(*this, x, y, o.sample_weight);
  check_states(*this, o.states, "evaluate", "EvaluateOptions::states", n, o.batch_size);
  CallbackList cbs = make_callbacks(*this, o.callbacks, o.verbose, 1, (n + o.batch_size - 1) / o.batch_size, o.out, nullptr);
  return run_evaluation(*this, c, x, y, o.sample_weight, o.batch_size, cbs, o.states);
}

Logs Model::train_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight,
                           const std::map<int64_t, double>& class_weight, RnnStates* states) {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "train_on_batch");
  const int64_t n = cardinality(*this, x, y, sample_weight);
  check_states(*this, states, "train_on_batch", "the `states` argument", n, n);  // the batch: all n samples
  training::reset(c);
  Batch b{x, y, weights_for(y[0], class_weight, sample_weight)};
  const bool finite = training::train_step(*this, c, b, std::random_device{}(), states);
  Logs logs = training::results(c);
  KCPP_CHECK(finite, ValueError, "The loss of model '", name(), "' is ", logs.at("loss"),
             " in train_on_batch. The weights were left as they were before this batch.");
  return logs;
}

Logs Model::test_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight,
                          RnnStates* states) {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "test_on_batch");
  const int64_t n = cardinality(*this, x, y, sample_weight);
  check_states(*this, states, "test_on_batch", "the `states` argument", n, n);
  training::reset(c);
  training::test_step(*this, c, Batch{x, y, sample_weight}, states);
  return training::results(c);
}

}  // namespace kerascpp
