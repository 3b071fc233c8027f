// The optimizer base (keras/src/optimizers/base_optimizer.py, Keras 3.15): variables, build,
// apply_gradients with clipping and weight decay, learning rate, get_config, and get().
//
// How the optimizer's state is named in saved files (measured on Keras 3.15.1 and tf_keras 2.21.0
// by compiling Sequential([Input((3,)), Dense(2, name="dense"), Dense(1, name="dense_1")]),
// fitting 2 epochs and listing the files with h5py):
//
// tf_keras 2.x legacy .h5 (model.save("m.h5")): group /optimizer_weights, attribute weight_names
// lists the datasets in optimizer.variables order; each name is an HDF5 path inside the group.
// learning_rate is NOT saved as a weight (it lives in training_config). The group has no other
// attributes. New tf_keras optimizers (tf_keras.optimizers.Adam, is_legacy_optimizer=false):
//   SGD(momentum=0.9): iteration:0 (int64 scalar), SGD/m/dense/kernel:0, SGD/m/dense/bias:0,
//                      SGD/m/dense_1/kernel:0, SGD/m/dense_1/bias:0
//   Adam:              iteration:0, Adam/m/dense/kernel:0, Adam/v/dense/kernel:0,
//                      Adam/m/dense/bias:0, Adam/v/dense/bias:0, Adam/m/dense_1/kernel:0,
//                      Adam/v/dense_1/kernel:0, Adam/m/dense_1/bias:0, Adam/v/dense_1/bias:0
//   (the prefix is the optimizer's name, "SGD"/"Adam" by default; m and v interleaved per
//   variable; iteration:0 has no prefix). training_config.optimizer_config is
//   {"class_name": "Custom>Adam", "config": {name, weight_decay, clipnorm, global_clipnorm,
//   clipvalue, use_ema, ema_momentum, ema_overwrite_frequency, jit_compile, is_legacy_optimizer,
//   learning_rate (float32 value as double), beta_1, ...}}.
// Legacy tf_keras optimizers (tf_keras.optimizers.legacy.*, the Keras 2.x <= 2.10 kind):
//   SGD(momentum=0.9): SGD/iter:0 (int64), SGD/dense/kernel/momentum:0, SGD/dense/bias/momentum:0,
//                      SGD/dense_1/kernel/momentum:0, SGD/dense_1/bias/momentum:0
//   Adam:              Adam/iter:0, then all m (Adam/dense/kernel/m:0, Adam/dense/bias/m:0,
//                      Adam/dense_1/kernel/m:0, Adam/dense_1/bias/m:0), then all v (.../v:0)
//   training_config: {"class_name": "Adam", "config": {name, learning_rate, decay, beta_1 (as
//   float32: 0.8999999761581421), beta_2, epsilon, amsgrad}}.
//
// Keras 3 legacy .h5 (model.save("m.h5")): /optimizer_weights with attribute weight_names =
// the variable paths in optimizer.variables order, each an HDF5 path inside the group:
//   SGD(momentum=0.9): sgd/iteration (int64 scalar), sgd/learning_rate (float32 scalar),
//     sgd/sequential_dense_kernel_momentum, sgd/sequential_dense_bias_momentum,
//     sgd/sequential_dense_1_kernel_momentum, sgd/sequential_dense_1_bias_momentum
//   Adam: adam/iteration, adam/learning_rate, adam/sequential_dense_kernel_momentum,
//     adam/sequential_dense_kernel_velocity, adam/sequential_dense_bias_momentum,
//     adam/sequential_dense_bias_velocity, ... (momentum and velocity interleaved per variable)
//   (the model's variable paths include the model name, "sequential/dense/kernel"; slot names
//   replace "/" by "_"). training_config.optimizer_config = {"class_name": "Adam", "config":
//   get_config()} (no module key).
// Keras 3 .keras (and .weights.h5): model.weights.h5 holds /optimizer/vars (attribute
// name="adam") with datasets "0", "1", ... N-1 in optimizer.variables order: 0 = iteration
// (int64 scalar), 1 = learning_rate (float32 scalar, absent with a schedule, which shifts the
// slots down by one), then the slots. /optimizer has no attributes. config.json's
// compile_config.optimizer = {"module": "keras.optimizers", "class_name": "Adam", "config":
// get_config(), "registered_name": null}. (Quirk seen: after model.save("m.h5") in the same
// process, a later model.save("m.keras") wrote a compile_config without the optimizer key.)
// Nadam adds one more variable after its slots: "<name>/variable" (u_product, float32 scalar).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>

#include "core/naming.h"
#include "kernels/parallel.h"
#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {

Optimizer::Optimizer(const Json& config, const std::string& default_name) : config_(config) {
  KCPP_CHECK(config_.is_object(), ValueError, "Optimizer config must be a dict. Received: ", config_.dump());
  const Json& name = config_["name"];
  name_ = name.is_string() ? name.get<std::string>() : unique_name(default_name);
  config_["name"] = name_;

  auto optional = [&](const char* key) {
    const Json& v = config_[key];
    if (v.is_null()) return -1.0;
    return detail::number(config_, key);
  };
  clipnorm_ = optional("clipnorm");
  clipvalue_ = optional("clipvalue");
  global_clipnorm_ = optional("global_clipnorm");
  const int clip_args = !config_["clipnorm"].is_null() + !config_["clipvalue"].is_null() +
                        !config_["global_clipnorm"].is_null();
  KCPP_CHECK(clip_args <= 1, ValueError,
             "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: clipnorm=",
             config_["clipnorm"].dump(), ", clipvalue=", config_["clipvalue"].dump(),
             ", global_clipnorm=", config_["global_clipnorm"].dump());
  weight_decay_ = config_["weight_decay"].is_null() ? 0.0 : detail::number(config_, "weight_decay");
  // Keras tests these for truth: None, 0 and False are off; an integral float counts as its integer.
  auto whole = [](const Json& v) { return v.is_number() && v.get<double>() == std::floor(v.get<double>()); };
  const Json& steps = config_["gradient_accumulation_steps"];
  if (!steps.is_null() && !(steps.is_number() && steps.get<double>() == 0)) {
    KCPP_CHECK(whole(steps) && steps.get<double>() >= 2, ValueError,
               "`gradient_accumulation_steps` must be an integer >= 2. Received: gradient_accumulation_steps=",
               steps.dump());
    accumulation_steps_ = static_cast<int64_t>(steps.get<double>());
  }
  const Json& ema = config_["use_ema"];
  KCPP_CHECK(ema.is_null() || ema.is_boolean(), ValueError, "`use_ema` must be a bool. Received: use_ema=", ema.dump());
  use_ema_ = ema.is_boolean() && ema.get<bool>();
  if (use_ema_) {
    ema_momentum_ = detail::number(config_, "ema_momentum");
    KCPP_CHECK(ema_momentum_ >= 0 && ema_momentum_ <= 1, ValueError,
               "`ema_momentum` must be in the range [0, 1]. Received: ema_momentum=", config_["ema_momentum"].dump());
    const Json& every = config_["ema_overwrite_frequency"];
    if (!every.is_null() && !(every.is_number() && every.get<double>() == 0)) {
      KCPP_CHECK(every.is_number_integer() && every.get<int64_t>() >= 1, ValueError,
                 "`ema_overwrite_frequency` must be an integer >= 1 or None. Received: ema_overwrite_frequency=",
                 every.dump());
      ema_overwrite_frequency_ = every.get<int64_t>();
    }
  }
  if (!config_["loss_scale_factor"].is_null()) detail::number(config_, "loss_scale_factor");

  iterations_ = std::make_shared<Variable>("iteration", name_ + "/iteration", Tensor::zeros({}, DType::int64),
                                           false);
  const Json& lr = config_["learning_rate"];
  if (lr.is_object()) {
    schedule_ = schedule_from_config(lr);
  } else {
    KCPP_CHECK(lr.is_number(), ValueError,
               "Argument `learning_rate` should be float, or an instance of LearningRateSchedule. "
               "Received instead: learning_rate=", lr.dump());
    learning_rate_ = std::make_shared<Variable>("learning_rate", name_ + "/learning_rate",
                                                Tensor::zeros({}, DType::float32), false);
    learning_rate_->data<float>()[0] = detail::f32(lr.get<double>());
  }
}

void Optimizer::build(const std::vector<VariablePtr>& vars) {
  if (built_) {  // some of its variables (a layer frozen since) are fine, as Keras builds once
    bool known = true;
    for (size_t i = 0; known && i < vars.size(); ++i)
      known = std::find(built_for_.begin(), built_for_.end(), vars[i].get()) != built_for_.end();
    KCPP_CHECK(known, ValueError, "Optimizer '", name_,
               "' is already built for other variables. When working with a new set of variables, "
               "you should recreate a new optimizer instance.");
    return;
  }
  for (const auto& v : vars) {
    KCPP_CHECK(v != nullptr, ValueError, "Optimizer '", name_, "' cannot be built on a null variable.");
    KCPP_CHECK(v->dtype() == DType::float32, NotImplementedError, "Optimizer '", name_,
               "' updates float32 variables only. Received: variable '", v->path(), "' of dtype ",
               dtype_name(v->dtype()));
  }
  built_for_.clear();
  for (const auto& v : vars) built_for_.push_back(v.get());
  built_vars_ = vars;
  // base_optimizer.build, before the class's own slots: the averages, then the accumulators.
  if (use_ema_)
    for (const auto& v : vars) averages_.push_back(add_slot(*v, "average"));
  if (accumulation_steps_)
    for (const auto& v : vars) accumulators_.push_back(add_slot(*v, "gradient_accumulator"));
  do_build(vars);
  built_ = true;
}

VariablePtr Optimizer::add_variable(const std::string& var_name, const Shape& shape, float initial, DType dtype) {
  Tensor t = Tensor::zeros(shape, dtype);
  KCPP_CHECK(initial == 0.f || dtype == DType::float32, ValueError, "Optimizer '", name_, "': variable ", var_name,
             " of dtype ", dtype_name(dtype), " starts at zero");
  if (initial != 0.f) std::fill_n(t.data<float>(), t.size(), initial);
  auto v = std::make_shared<Variable>(var_name, name_ + "/" + var_name, t, false);
  slots_.push_back(v);
  return v;
}

namespace {

// base_optimizer.add_variable_from_reference: f"{reference_variable.path.replace('/', '_')}_{name}".
std::string slot_variable_name(const Variable& var, const std::string& slot_name) {
  std::string ref = var.path().empty() ? var.name() : var.path();
  for (char& c : ref)
    if (c == '/' || (var.path().empty() && c == ':')) c = '_';
  return ref + "_" + slot_name;
}

}  // namespace

VariablePtr Optimizer::add_slot(const Variable& var, const std::string& slot_name, float initial) {
  return add_variable(slot_variable_name(var, slot_name), var.shape(), initial);
}

VariablePtr Optimizer::slot(const Variable& var, const std::string& slot_name) const {
  const std::string wanted = slot_variable_name(var, slot_name);
  for (const VariablePtr& s : slots_)
    if (s->name() == wanted) return s;
  return nullptr;
}

int64_t Optimizer::iterations() const {
  const int64_t calls = iterations_->data<int64_t>()[0];
  return accumulation_steps_ ? calls / accumulation_steps_ : calls;  // floor_divide of non-negatives
}

double Optimizer::learning_rate() const {
  if (schedule_) return (*schedule_)(iterations_->data<int64_t>()[0]);  // Keras: the schedule of _iterations
  return learning_rate_->data<float>()[0];
}

void Optimizer::set_learning_rate(double lr) {
  KCPP_CHECK(!schedule_, TypeError,
             "This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
             "constructor argument, hence its learning rate is not settable. If you need the learning "
             "rate to be settable, you should instantiate the optimizer with a float `learning_rate` "
             "argument.");
  learning_rate_->data<float>()[0] = detail::f32(lr);
  learning_rate_->mark_updated();
}

std::vector<VariablePtr> Optimizer::variables() const {
  std::vector<VariablePtr> out{iterations_};
  if (learning_rate_) out.push_back(learning_rate_);
  out.insert(out.end(), slots_.begin(), slots_.end());
  return out;
}

void Optimizer::set_schedule(SchedulePtr schedule) {
  KCPP_CHECK(schedule != nullptr, ValueError, "Optimizer '", name_, "': set_schedule() needs a schedule");
  KCPP_CHECK(!built_, ValueError, "Optimizer '", name_, "' is built: give it its learning-rate schedule before "
             "it trains");
  schedule_ = std::move(schedule);
  learning_rate_.reset();
}

Json LearningRateSchedule::serialize() const {  // learning_rate_schedule.serialize -> serialize_keras_object
  return Json{{"module", "keras.optimizers.schedules"}, {"class_name", class_name()}, {"config", get_config()},
              {"registered_name", nullptr}};
}

Json Optimizer::get_config() const {
  Json lr;
  if (schedule_) {
    lr = schedule_->serialize();
  } else {
    lr = static_cast<double>(learning_rate_->data<float>()[0]);  // float(variable.numpy())
  }
  Json c = {{"name", name_}, {"learning_rate", lr}};
  for (const char* key : {"weight_decay", "clipnorm", "global_clipnorm", "clipvalue", "use_ema", "ema_momentum",
                          "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps"})
    c[key] = config_.value(key, Json());
  c.update(own_config());
  return c;
}

namespace {

// A gradient's elements (float32: apply_gradients has converted it).
std::span<float> values(const Tensor& t) { return {t.data<float>(), static_cast<size_t>(t.size())}; }

// base_optimizer._clip_by_norm (TF: tf.clip_by_norm): g * clipnorm / max(||g||, clipnorm), float32.
void clip_by_norm(std::span<float> g, float clipnorm) {
  float l2sum = 0.f;
  for (float x : g) l2sum += x * x;
  const float l2norm = l2sum > 0.f ? std::sqrt(l2sum) : l2sum;
  const float denom = std::max(l2norm, clipnorm);
  for (float& x : g) x = (x * clipnorm) / denom;
}

// base_optimizer.clip_by_global_norm.
void clip_by_global_norm(std::vector<Optimizer::Update>& updates, double clip_norm) {
  float squared = 0.f;
  for (const auto& u : updates) {
    float s = 0.f;
    for (float x : values(u.grad)) s += x * x;
    squared += s;
  }
  const float use_norm = std::sqrt(squared);
  // clip_norm * minimum(1.0 / use_norm, 1.0 / clip_norm): the second quotient is a Python double.
  const float scale_for_finite = detail::f32(clip_norm) * std::min(1.0f / use_norm, detail::f32(1.0 / clip_norm));
  const float scale = scale_for_finite + (use_norm - use_norm);  // NaN for a non-finite norm
  for (auto& u : updates)
    for (float& x : values(u.grad)) x *= scale;
}

}  // namespace

void Optimizer::apply_gradients(const std::vector<Tensor>& grads, const std::vector<VariablePtr>& vars) {
  KCPP_CHECK(grads.size() == vars.size(), ValueError, "Optimizer '", name_, "' received ", grads.size(),
             " gradients for ", vars.size(), " variables; they must match one to one.");
  if (grads.empty()) return;  // base_optimizer.apply: an empty list is a no-op
  // Validate everything before writing anything: on error nothing has changed.
  bool any = false;
  for (size_t i = 0; i < vars.size(); ++i) {
    KCPP_CHECK(vars[i] != nullptr, ValueError, "Optimizer '", name_, "' received a null variable at index ", i);
    if (!grads[i].defined()) continue;
    any = true;
    KCPP_CHECK(grads[i].shape() == vars[i]->shape(), ValueError, "Gradient for variable '", vars[i]->path(),
               "' has shape ", shape_str(grads[i].shape()), ", which does not match the variable's shape ",
               shape_str(vars[i]->shape()));
    const DType gd = grads[i].dtype();
    KCPP_CHECK(gd == DType::float32 || gd == DType::float64 || gd == DType::float16 || gd == DType::bfloat16,
               ValueError, "Gradient for variable '", vars[i]->path(), "' must be a float tensor. Received: dtype=",
               dtype_name(gd));
  }
  std::vector<size_t> index(vars.size());
  if (built_) {
    for (size_t i = 0; i < vars.size(); ++i) {
      auto it = std::find(built_for_.begin(), built_for_.end(), vars[i].get());
      KCPP_CHECK(it != built_for_.end(), ValueError, "Unknown variable: '", vars[i]->path(),
                 "'. This optimizer can only be called for the variables it was originally built with. When "
                 "working with a new set of variables, you should recreate a new optimizer instance.");
      index[i] = static_cast<size_t>(it - built_for_.begin());
    }
  } else {
    for (const auto& v : vars)
      KCPP_CHECK(v->dtype() == DType::float32, NotImplementedError, "Optimizer '", name_,
                 "' updates float32 variables only. Received: variable '", v->path(), "' of dtype ",
                 dtype_name(v->dtype()));
    for (size_t i = 0; i < vars.size(); ++i) index[i] = i;
  }
  KCPP_CHECK(any, ValueError, "No gradients provided for any variable.");
  if (!built_) build(vars);

  // Undefined gradients are skipped (base_optimizer._filter_empty_gradients). A float32 gradient is
  // read in place unless this step changes it (loss scaling, accumulation, clipping) or it shares
  // storage with a variable the step writes or one of the optimizer's own (a user's
  // apply_gradients([(v.value, v)])): then it is copied first, as any other dtype is converted, so the
  // caller's tensors never change and no update reads what it writes.
  const bool changes_gradients = !config_["loss_scale_factor"].is_null() || accumulation_steps_ > 0 ||
                                 clipnorm_ > 0 || global_clipnorm_ > 0 || clipvalue_ > 0;
  std::vector<const Storage*> written;
  for (size_t i = 0; i < vars.size(); ++i)
    if (grads[i].defined()) written.push_back(vars[i]->value().storage().get());
  std::sort(written.begin(), written.end());
  // One storage listed twice (a variable given twice, or variables sharing storage): the updates run
  // one after the other in the given order, as they always did, never at once on the threads.
  const bool one_by_one = std::adjacent_find(written.begin(), written.end()) != written.end();
  for (const VariablePtr& v : slots_) written.push_back(v->value().storage().get());
  std::sort(written.begin(), written.end());
  std::vector<Update> updates;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!grads[i].defined()) continue;
    Tensor t = grads[i];
    if (t.dtype() != DType::float32)
      t = t.astype(DType::float32);
    else if (changes_gradients || std::binary_search(written.begin(), written.end(), t.storage().get()))
      t = t.copy();
    updates.push_back({std::move(t), vars[i].get(), index[i]});
  }
  if (!config_["loss_scale_factor"].is_null()) {
    const float scale = detail::f32(config_["loss_scale_factor"].get<double>());
    for (Update& u : updates)
      for (float& x : values(u.grad)) x = x / scale;
  }
  // Gradient accumulation (base_optimizer._backend_apply_gradients): every call but each N-th adds the
  // gradients to the accumulators; the N-th applies (gradient + accumulated) / N and resets them.
  if (accumulation_steps_) {
    const bool update = (iterations_->data<int64_t>()[0] + 1) % accumulation_steps_ == 0;
    const float n = static_cast<float>(accumulation_steps_);
    for (Update& u : updates) {
      Variable& acc = *accumulators_[u.index];
      float* a = acc.data<float>();
      float* g = u.grad.data<float>();
      for (int64_t e = 0, size = u.grad.size(); e < size; ++e) {
        if (update) g[e] = (g[e] + a[e]) / n;
        else a[e] += g[e];
      }
      acc.mark_updated();
    }
    if (update)  // _backend_reset_gradient_accumulators: all of them, those without a gradient too
      for (const VariablePtr& acc : accumulators_) {
        float* a = acc->data<float>();
        std::fill_n(a, acc->value().size(), 0.f);
        acc->mark_updated();
      }
    if (!update) {
      finish_step();
      return;
    }
  }
  clip_and_update(updates, one_by_one);
  finish_step();
}

void Optimizer::clip_and_update(std::vector<Update>& updates, bool one_by_one) {
  // base_optimizer._clip_gradients: `if self.clipnorm and self.clipnorm > 0` etc.
  if (clipnorm_ > 0) {
    for (Update& u : updates) clip_by_norm(values(u.grad), detail::f32(clipnorm_));
  } else if (global_clipnorm_ > 0) {
    clip_by_global_norm(updates, global_clipnorm_);
  } else if (clipvalue_ > 0) {
    const float v = detail::f32(clipvalue_);
    for (Update& u : updates)
      for (float& x : values(u.grad)) x = std::min(std::max(x, -v), v);
  }
  const float lr = detail::f32(learning_rate());
  // base_optimizer._apply_weight_decay (TF: variable.assign_sub(variable * wd * lr)), before the update.
  if (!config_["weight_decay"].is_null()) {
    const float wd = detail::f32(weight_decay_);
    for (const Update& u : updates) {
      float* p = u.var->data<float>();
      const int64_t n = u.var->value().size();
      for (int64_t k = 0; k < n; ++k) p[k] = p[k] - (p[k] * wd) * lr;
    }
  }
  const double step = static_cast<double>(iterations() + 1);
  before_update_steps(step);
  if (one_by_one)
    for (const Update& u : updates) update_steps({u}, lr, step);
  else
    update_steps(updates, lr, step);
  for (const Update& u : updates) u.var->mark_updated();
}

void Optimizer::update_steps(const std::vector<Update>& updates, float lr, double step) {
  for (const Update& u : updates) update_step(u.grad, *u.var, u.index, lr, step);
}

void Optimizer::for_update_ranges(const std::vector<Update>& updates, RangeBody run, void* body) {
  std::vector<int64_t> start(updates.size() + 1, 0);  // updates[k] is [start[k], start[k + 1]) of the whole
  for (size_t k = 0; k < updates.size(); ++k) start[k + 1] = start[k] + updates[k].grad.size();
  kernels::parallel_chunks(start.back(), kernels::kElementwiseGrain, [&](int64_t b, int64_t e) {
    size_t k = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), b) - start.begin()) - 1;
    for (; b < e; ++k) {
      const int64_t end = std::min(e, start[k + 1]);
      if (end > b) run(body, k, b - start[k], end - start[k]);
      b = std::max(b, end);
    }
  });
}

// After every call, update step or not: the moving averages (base_optimizer.
// _update_model_variables_moving_average: momentum 0 at the first step, so the average starts at the
// variable), their copy into the variables every ema_overwrite_frequency steps, and the call counter.
void Optimizer::finish_step() {
  if (use_ema_) {
    const float momentum = iterations() != 0 ? detail::f32(ema_momentum_) : 0.f, rest = 1.f - momentum;
    for (size_t i = 0; i < built_vars_.size(); ++i) {
      const float* x = built_vars_[i]->data<float>();
      float* a = averages_[i]->data<float>();
      for (int64_t k = 0, n = built_vars_[i]->value().size(); k < n; ++k) a[k] = momentum * a[k] + rest * x[k];
      averages_[i]->mark_updated();
    }
    if (ema_overwrite_frequency_ && (iterations() + 1) % ema_overwrite_frequency_ == 0)
      finalize_variable_values(built_vars_);
  }
  iterations_->data<int64_t>()[0] += 1;
  iterations_->mark_updated();
}

void Optimizer::finalize_variable_values(const std::vector<VariablePtr>& vars) {
  if (!use_ema_ || !built_) return;
  KCPP_CHECK(vars.size() == averages_.size(), ValueError, "The length of model variables (", vars.size(),
             ") to override does not match the length of model variables stored in the optimizer (",
             averages_.size(), "). Please check if the optimizer was called on your model.");
  for (size_t i = 0; i < vars.size(); ++i) vars[i]->assign(averages_[i]->value().copy());
}

}  // namespace kerascpp::optimizers
