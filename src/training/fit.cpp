// model.fit / evaluate / train_on_batch / test_on_batch (keras/src/backend/tensorflow/trainer.py and
// keras/src/trainers/trainer.py): data checks, validation split, shuffling, class weights, batches,
// callbacks and History.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "core/mapping_cache.h"
#include "models/functional.h"
#include "ops/ops.h"
#include "training/compiled.h"
#include "training/distribute/replicas.h"
#include "training/epoch_iterator.h"

namespace kerascpp {
namespace {

using training::Batch;
using training::ArrayDataset;
using training::Compiled;
using training::EpochIterator;
using training::Replicas;

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

struct CallbackList {
  std::vector<callbacks::CallbackPtr> all;
  template <typename F>
  void each(F f) {
    for (auto& c : all) f(*c);
  }
};

CallbackList make_callbacks(Model& m, const std::vector<callbacks::CallbackPtr>& user, int verbose, int epochs, int64_t steps,
                            std::ostream* out, std::shared_ptr<callbacks::History>* history, const Replicas& replicas) {
  // Keras's order: the user's callbacks, then History, then the progress bar (so that what a
  // callback adds to the logs, e.g. ReduceLROnPlateau's learning_rate, reaches both). A worker other
  // than the chief of data-parallel training drops those that write files or print.
  CallbackList list;
  for (const auto& c : user)
    if (replicas.chief() || !c || !c->chief_only()) list.all.push_back(c);
  if (!replicas.chief()) verbose = 0;
  if (history) {
    *history = std::make_shared<callbacks::History>();
    list.all.push_back(*history);
  }
  // A ProgbarLogger among the user's callbacks is the progress bar: Keras adds none then.
  const bool has_bar = std::any_of(user.begin(), user.end(), [](const callbacks::CallbackPtr& c) {
    return dynamic_cast<const callbacks::ProgbarLogger*>(c.get()) != nullptr;
  });
  if (verbose > 0 && !has_bar) list.all.push_back(std::make_shared<callbacks::ProgbarLogger>(out));
  for (auto& c : list.all) {
    KCPP_CHECK(c != nullptr, ValueError, "Received a null callback");
    c->set_model(&m);
    c->set_params(callbacks::Params{epochs, steps, verbose});
  }
  return list;
}

// Keras hands callbacks their logs sorted by key (keras/src/callbacks/callback_list.py).
Logs sorted(const Logs& logs) {
  Logs out = logs;
  out.sort_keys();
  return out;
}

bool has_terminate_on_nan(const std::vector<callbacks::CallbackPtr>& cbs) {
  for (const auto& c : cbs)
    if (dynamic_cast<const callbacks::TerminateOnNaN*>(c.get())) return true;
  return false;
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

// Data-parallel fit or evaluate failing on this worker alone (its rows, a callback's file): its
// connections close, so the others stop at once rather than at the timeout.
void leave(const DistributedContextPtr& context, const std::exception& e) {
  if (context && context->world_size() > 1) context->abort(e.what());
}

// A kerascpp error of one batch, again with the batch's place in front; other exceptions (a Dataset's
// own, Python's) pass through unchanged.
[[noreturn]] void rethrow_at(const std::string& where) {
  try {
    throw;
  } catch (const ValueError& e) {
    throw ValueError(where + e.what());
  } catch (const TypeError& e) {
    throw TypeError(where + e.what());
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(where + e.what());
  } catch (const IOError& e) {
    throw IOError(where + e.what());
  }
}

// How each batch is read and checked: arrays were checked whole; a Dataset's batches one by one.
struct Feed {
  training::EpochIterator& it;
  bool from_dataset;
  const std::map<int64_t, double>* class_weight;  // applied to a Dataset's batches (arrays: beforehand)
  RnnStates* states;
  const char* what;   // "fit", "evaluate", "fit's validation"
  const char* option;  // where the states go (check_states)
};

// "fit, epoch 2, batch 5: ": the epoch counted from 1, the batch from 0, as the NaN-loss error and
// Keras's callbacks count them.
std::string place(const Feed& f, int epoch, int64_t step) {
  return std::string(f.what) + (epoch >= 0 ? ", epoch " + std::to_string(epoch + 1) : std::string()) + ", batch " +
         std::to_string(step) + ": ";
}

// The feed's next batch, checked; nullopt at the end of the epoch.
std::optional<Batch> next_batch(Model& m, Feed& f, int epoch) {
  const int64_t step = f.it.step();
  try {
    std::optional<Batch> b = f.it.next();
    if (!b || !f.from_dataset) return b;
    const int64_t n = cardinality(m, b->x, b->y, b->sample_weight);
    KCPP_CHECK(n > 0, ValueError, "the dataset gave an empty batch");
    check_states(m, f.states, f.what, f.option, n, n);
    if (f.class_weight && !f.class_weight->empty()) {
      KCPP_CHECK(!b->sample_weight.defined(), ValueError,
                 "You cannot specify `class_weight` and `sample_weight` at the same time.");
      b->sample_weight = weights_for(b->y.at(0), *f.class_weight, Tensor());
    }
    return b;
  } catch (...) {
    rethrow_at(place(f, epoch, step));
  }
}

// The evaluation loop shared by evaluate() and fit's validation: a new pass of the feed, its batches
// (all, or the feed's steps).
Logs run_evaluation(Model& m, Compiled& c, Feed& f, CallbackList& cbs, Replicas& replicas) {
  training::reset(c);
  replicas.begin_pass();
  Logs logs;
  cbs.each([&](callbacks::Callback& cb) { cb.on_test_begin(logs); });
  f.it.reset();
  f.it.begin_epoch();
  while (std::optional<Batch> b = next_batch(m, f, -1)) {
    const int64_t step = f.it.step() - 1;
    cbs.each([&](callbacks::Callback& cb) { cb.on_test_batch_begin(step, logs); });
    try {
      training::test_step(m, c, *b, f.states, &replicas);
    } catch (...) {
      rethrow_at(place(f, -1, step));
    }
    logs = sorted(replicas.results(c));
    cbs.each([&](callbacks::Callback& cb) { cb.on_test_batch_end(step, logs); });
  }
  f.it.end_epoch();
  logs = sorted(replicas.results(c));
  cbs.each([&](callbacks::Callback& cb) { cb.on_test_end(logs); });
  return logs;
}

// Keras's validation_freq: after every validation_freq-th epoch, or (0) after the listed (1-based) ones.
bool validates_after(const FitOptions& o, int epoch) {
  if (o.validation_freq == 0)
    return std::find(o.validation_epochs.begin(), o.validation_epochs.end(), epoch + 1) != o.validation_epochs.end();
  return (epoch + 1) % o.validation_freq == 0;
}

// The epochs of fit over a feed (arrays or a Dataset), with validation on `val` (null: none).
std::shared_ptr<callbacks::History> run_fit(Model& m, Compiled& c, Feed& train, Feed* val, std::mt19937_64& rng,
                                            const FitOptions& o, Replicas& replicas) {
  KCPP_CHECK(o.validation_freq >= 0, ValueError, "Expected a positive `validation_freq` (or 0 with "
             "validation_epochs). Received: validation_freq=", o.validation_freq);
  MappingCache::Scope reuse(c.pages);  // each step's big tensors reuse the pages of the step before
  std::shared_ptr<callbacks::History> history;
  CallbackList cbs = make_callbacks(m, o.callbacks, o.verbose, o.epochs, train.it.num_batches(), o.out, &history, replicas);
  const bool nan_stops = has_terminate_on_nan(o.callbacks);
  c.optimizer->build(training::trainable_weights(m, c));
  m.stop_training = false;
  train.it.reset();
  Logs logs;
  m.resume_at_epoch.reset();
  cbs.each([&](callbacks::Callback& cb) { cb.on_train_begin(logs); });
  int first_epoch = m.resume_at_epoch.value_or(o.initial_epoch);
  m.resume_at_epoch.reset();
  replicas.check_same_model(m, &c, "fit", true);
  replicas.take_chief_state(m, c, &first_epoch);  // after on_train_begin: BackupAndRestore's restored state
  for (int epoch = first_epoch; epoch < o.epochs && !m.stop_training; ++epoch) {
    training::reset(c);
    replicas.begin_pass();
    Logs epoch_logs;
    cbs.each([&](callbacks::Callback& cb) { cb.on_epoch_begin(epoch, epoch_logs); });
    train.it.begin_epoch();
    // Data-parallel: a worker that stops takes part in one more step's exchange, which tells the others
    // (none applies that step: training ends after the same batch everywhere).
    while (!m.stop_training || replicas.active()) {
      std::optional<Batch> b = next_batch(m, train, epoch);
      if (!b) break;
      const int64_t step = train.it.step() - 1;
      Logs batch_logs;
      if (!m.stop_training) cbs.each([&](callbacks::Callback& cb) { cb.on_train_batch_begin(step, batch_logs); });
      replicas.set_stop_request(m.stop_training);
      bool finite = false;
      try {
        finite = training::train_step(m, c, *b, replicas.worker_seed(rng()), train.states, &replicas);
      } catch (...) {
        rethrow_at(place(train, epoch, step) + "(the weights are as they were before this batch) ");
      }
      if (replicas.stopped()) {
        m.stop_training = true;
        break;
      }
      batch_logs = sorted(replicas.step_logs(c));
      if (!finite && !nan_stops)
        KCPP_THROW(ValueError, "The loss of model '", m.name(), "' is ", batch_logs.at("loss"), " at epoch ", epoch + 1,
                   ", batch ", step, ". The weights were left as they were before this batch. Lower the learning rate, "
                   "check the data for NaN / inf, or pass keras.callbacks.TerminateOnNaN() to stop training instead.");
      cbs.each([&](callbacks::Callback& cb) { cb.on_train_batch_end(step, batch_logs); });
    }
    train.it.end_epoch();
    if (train.it.exhausted()) {  // the data could not feed this epoch: Keras's warning, and no empty epoch
      m.stop_training = true;
      break;
    }
    // A stop asked for after the epoch's last batch has no next step to tell the others: tell them now,
    // before validation (which every worker runs, or none).
    m.stop_training = replicas.any(m.stop_training);
    epoch_logs = replicas.results(c);
    if (val && !m.stop_training && validates_after(o, epoch)) {
      Logs v = run_evaluation(m, c, *val, cbs, replicas);
      epoch_logs.set_all(v, "val_");
    }
    epoch_logs = sorted(epoch_logs);
    cbs.each([&](callbacks::Callback& cb) { cb.on_epoch_end(epoch, epoch_logs); });
    m.stop_training = replicas.any(m.stop_training);  // a stop anywhere stops every worker
    logs = epoch_logs;
  }
  // Keras's fit: optimizer.finalize_variable_values (use_ema: the weights become their averages).
  if (o.epochs > 0) c.optimizer->finalize_variable_values(training::trainable_weights(m, c));
  cbs.each([&](callbacks::Callback& cb) { cb.on_train_end(logs); });
  return history;
}

// evaluate()'s pass over its feed, data-parallel when o.distributed is given.
Logs evaluate_feed(Model& m, Compiled& c, Feed& f, const EvaluateOptions& o) {
  Replicas replicas(o.distributed.get());
  replicas.check_same_model(m, &c, "evaluate", false);
  replicas.take_chief_weights(m);  // as variables made under a strategy's scope start from the chief's
  CallbackList cbs = make_callbacks(m, o.callbacks, o.verbose, 1, f.it.num_batches(), o.out, nullptr, replicas);
  return run_evaluation(m, c, f, cbs, replicas);
}

void check_fit_options(const FitOptions& o) {
  KCPP_CHECK(o.batch_size > 0, ValueError, "Expected a positive batch_size. Received: batch_size=", o.batch_size);
  KCPP_CHECK(o.epochs >= 0 && o.initial_epoch >= 0, ValueError, "Expected non-negative epochs and initial_epoch. Received: epochs=",
             o.epochs, ", initial_epoch=", o.initial_epoch);
  KCPP_CHECK(o.steps_per_epoch >= 0 && o.validation_steps >= 0 && o.validation_batch_size >= 0, ValueError,
             "Expected non-negative steps_per_epoch, validation_steps and validation_batch_size. Received: ",
             o.steps_per_epoch, ", ", o.validation_steps, ", ", o.validation_batch_size);
}

// fit's validation feed: validation_dataset, or validation arrays (given, or split off); none when neither.
struct ValidationFeed {
  std::optional<ArrayDataset> arrays;
  std::optional<EpochIterator> it;
  std::optional<Feed> feed;
  ValidationFeed(Model& m, const FitOptions& o, const std::vector<Tensor>& vx, const std::vector<Tensor>& vy,
                 const Tensor& vsw) {
    Dataset* data = o.validation_dataset;
    if (!data && !vx.empty()) {
      cardinality(m, vx, vy, vsw);
      check_states(m, o.states, "fit's validation", "FitOptions::states", vx[0].dim(0),
                   o.validation_batch_size ? o.validation_batch_size : o.batch_size);
      data = &arrays.emplace(vx, vy, vsw, o.validation_batch_size ? o.validation_batch_size : o.batch_size, nullptr);
    }
    if (!data) return;
    it.emplace(*data, o.validation_steps, data == o.validation_dataset);
    feed.emplace(Feed{*it, data == o.validation_dataset, nullptr, o.states, "fit's validation", "FitOptions::states"});
  }
  Feed* get() { return feed ? &*feed : nullptr; }
};

}  // namespace

std::shared_ptr<callbacks::History> Model::fit(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in,
                                               const FitOptions& o) try {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "fit");
  check_fit_options(o);
  KCPP_CHECK(o.validation_split >= 0 && o.validation_split < 1, ValueError,
             "`validation_split` must be in the range [0, 1). Received: validation_split=", o.validation_split);
  const int64_t total = cardinality(*this, x_in, y_in, o.sample_weight);
  for (size_t i = 0; i < y_in.size(); ++i)
    KCPP_CHECK(!c.losses[i] || y_in[i].rank() >= 1, ValueError, "Invalid target for output ", i);
  // validation_data wins over validation_split; the split takes the last samples, before shuffling.
  std::vector<Tensor> x = x_in, y = y_in, vx = o.validation_x, vy = o.validation_y;
  Tensor sw = weights_for(y_in[0], o.class_weight, o.sample_weight), vsw = o.validation_sample_weight;
  int64_t n = total;
  if (vx.empty() && !o.validation_dataset && o.validation_split > 0) {
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
  KCPP_CHECK(n > 0, ValueError, "Expected input data to be non-empty.");
  check_states(*this, o.states, "fit", "FitOptions::states", n, o.batch_size);
  ValidationFeed val(*this, o, vx, vy, vsw);
  Replicas replicas(o.distributed.get());
  std::mt19937_64 rng(replicas.chief_seed(o.seed ? o.seed : std::random_device{}()));  // one shuffle for all workers
  ArrayDataset arrays(x, y, sw, o.batch_size, o.shuffle ? &rng : nullptr);
  EpochIterator it(arrays, o.steps_per_epoch, false);
  Feed train{it, false, nullptr, o.states, "fit", "FitOptions::states"};
  return run_fit(*this, c, train, val.get(), rng, o, replicas);
} catch (const std::exception& e) {
  leave(o.distributed, e);
  throw;
}

std::shared_ptr<callbacks::History> Model::fit(Dataset& data, const FitOptions& o) try {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "fit");
  check_fit_options(o);
  KCPP_CHECK(o.validation_split == 0, ValueError, "`validation_split` is only supported for Tensors or NumPy arrays. "
             "Received: validation_split=", o.validation_split, " with a Dataset");
  KCPP_CHECK(!o.sample_weight.defined(), ValueError, "`sample_weight` argument is not supported when using a dataset: "
             "the dataset's batches carry their sample weights");
  ValidationFeed val(*this, o, o.validation_x, o.validation_y, o.validation_sample_weight);
  Replicas replicas(o.distributed.get());
  std::mt19937_64 rng(replicas.chief_seed(o.seed ? o.seed : std::random_device{}()));
  EpochIterator it(data, o.steps_per_epoch, true);
  Feed train{it, true, &o.class_weight, o.states, "fit", "FitOptions::states"};
  return run_fit(*this, c, train, val.get(), rng, o, replicas);
} catch (const std::exception& e) {
  leave(o.distributed, e);
  throw;
}

Logs Model::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const EvaluateOptions& o) try {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "evaluate");
  MappingCache::Scope reuse(c.pages);  // core/mapping_cache.h
  KCPP_CHECK(o.batch_size > 0, ValueError, "Expected a positive batch_size. Received: batch_size=", o.batch_size);
  const int64_t n = cardinality(*this, x, y, o.sample_weight);
  check_states(*this, o.states, "evaluate", "EvaluateOptions::states", n, o.batch_size);
  ArrayDataset arrays(x, y, o.sample_weight, o.batch_size, nullptr);
  EpochIterator it(arrays, o.steps, false);
  Feed f{it, false, nullptr, o.states, "evaluate", "EvaluateOptions::states"};
  return evaluate_feed(*this, c, f, o);
} catch (const std::exception& e) {
  leave(o.distributed, e);
  throw;
}

Logs Model::evaluate(Dataset& data, const EvaluateOptions& o) try {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "evaluate");
  MappingCache::Scope reuse(c.pages);  // core/mapping_cache.h
  KCPP_CHECK(!o.sample_weight.defined(), ValueError, "`sample_weight` argument is not supported when using a dataset: "
             "the dataset's batches carry their sample weights");
  EpochIterator it(data, o.steps, true);
  Feed f{it, true, nullptr, o.states, "evaluate", "EvaluateOptions::states"};
  return evaluate_feed(*this, c, f, o);
} catch (const std::exception& e) {
  leave(o.distributed, e);
  throw;
}

std::vector<Tensor> Model::predict(Dataset& data, int64_t steps) const {
  EpochIterator it(data, steps, true);
  it.begin_epoch();
  std::vector<std::vector<Tensor>> outs;
  for (;;) {
    const int64_t step = it.step();
    try {
      std::optional<Batch> b = it.next();
      if (!b) break;
      const std::vector<Tensor> y = predict(b->x, std::max<int64_t>(1, b->x.empty() ? 1 : b->x[0].dim(0)));
      outs.resize(y.size());
      for (size_t i = 0; i < y.size(); ++i) outs[i].push_back(y[i]);
    } catch (...) {
      rethrow_at("predict, batch " + std::to_string(step) + ": ");
    }
  }
  it.end_epoch();
  KCPP_CHECK(!outs.empty(), ValueError, "predict: the dataset gave no batch. Received an empty dataset.");
  std::vector<Tensor> result;
  for (auto& parts : outs) result.push_back(parts.size() == 1 ? parts[0] : ops::concatenate(parts, 0));
  return result;
}

Logs Model::train_on_batch(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight,
                           const std::map<int64_t, double>& class_weight, RnnStates* states) {
  Compiled& c = compiled_or_throw(*this, compiled_.get(), "train_on_batch");
  MappingCache::Scope reuse(c.pages);  // core/mapping_cache.h
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
  MappingCache::Scope reuse(c.pages);  // core/mapping_cache.h
  const int64_t n = cardinality(*this, x, y, sample_weight);
  check_states(*this, states, "test_on_batch", "the `states` argument", n, n);
  training::reset(c);
  training::test_step(*this, c, Batch{x, y, sample_weight}, states);
  return training::results(c);
}

}  // namespace kerascpp
