// Optimizers and learning-rate schedules: the keras.optimizers classes, with Keras 3's update
// formulas (keras/src/optimizers/*.py) and its variables, so that saved optimizer state loads in
// Keras and back.
//
//   auto adam = optimizers::get(Json{{"class_name", "Adam"}, {"config", {{"learning_rate", 1e-3}}}});
//   adam->build(model.trainable_weights());
//   adam->apply_gradients(grads, model.trainable_weights());
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "kerascpp/class_info.h"
#include "kerascpp/tensor.h"
#include "kerascpp/variable.h"

namespace kerascpp::optimizers {

using Json = nlohmann::json;

// keras.optimizers.schedules: ExponentialDecay, PiecewiseConstantDecay, CosineDecay, PolynomialDecay,
// InverseTimeDecay, CosineDecayRestarts; and a user's schedule object (a Python subclass).
class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual std::string class_name() const = 0;
  // The learning rate at this step (the optimizer's iterations before the update).
  virtual double operator()(int64_t step) const = 0;
  virtual Json get_config() const = 0;
  // Keras's serialize_keras_object form, as an optimizer's config holds it: {"module":
  // "keras.optimizers.schedules", "class_name", "config", "registered_name": null}; a user's schedule
  // (a Python subclass) names its own module and class.
  virtual Json serialize() const;
};
using SchedulePtr = std::shared_ptr<LearningRateSchedule>;
// From {"class_name", "config"} (Keras 2 and 3, module keys ignored); ValueError for unknown ones.
SchedulePtr schedule_from_config(const Json& config);

class Optimizer {
 public:
  // config: Keras 3 keys (learning_rate as a number or a schedule config, clipnorm, clipvalue,
  // global_clipnorm, weight_decay, and the class's own); Keras 2 aliases (lr) accepted.
  Optimizer(const Json& config, const std::string& default_name);
  virtual ~Optimizer() = default;

  // One variable's part of a step (update_steps): its gradient (float32, the variable's shape, never
  // the storage of a variable the step writes), the variable, and its index in the built list.
  struct Update {
    Tensor grad;
    Variable* var;
    size_t index;
  };

  virtual std::string class_name() const = 0;  // "Adam"
  const std::string& name() const { return name_; }

  // Creates the slot variables for `vars` (Keras builds on the first apply; fit builds on compile).
  // Calling it again with other variables is an error (ValueError).
  void build(const std::vector<VariablePtr>& vars);
  bool built() const { return built_; }
  // One step: clipvalue / clipnorm / global_clipnorm as Keras, then weight decay, then the update
  // written in place into each variable (bumping its version), then iterations += 1. Builds on first
  // use. ValueError when counts or shapes differ from the built variables. Undefined gradients
  // (variables the loss does not depend on) are skipped, as Keras does.
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<VariablePtr>& vars);

  // Keras's optimizer.iterations: the steps taken; with gradient_accumulation_steps N, the calls of
  // apply_gradients divided by N (the saved "iteration" variable counts every call, as Keras's).
  int64_t iterations() const;
  // Keras's finalize_variable_values, which fit calls after its last epoch: with use_ema, the
  // variables take their moving averages.
  void finalize_variable_values(const std::vector<VariablePtr>& vars);
  // The learning rate used by the next step: the schedule's value at the call counter (the "iteration"
  // variable, as Keras's _iterations), or the variable.
  double learning_rate() const;
  // Sets the learning-rate variable (ReduceLROnPlateau, LearningRateScheduler); TypeError when the
  // learning rate is a schedule, as Keras (base_optimizer.py, learning_rate setter).
  void set_learning_rate(double lr);
  bool has_schedule() const { return schedule_ != nullptr; }
  // The learning rate as `schedule` from now on (Keras's learning_rate=<a LearningRateSchedule object>),
  // before the optimizer is built; the learning-rate variable goes, as with a schedule from the config.
  void set_schedule(SchedulePtr schedule);

  // Every optimizer variable in Keras 3's order (optimizer.variables): iterations (int64), then
  // learning_rate (float32, absent with a schedule), then the slots in the order Keras creates them.
  // Their path() is Keras 3's: "<name>/iteration", "<name>/learning_rate", then
  // "<name>/<var path with '/' -> '_'>_<slot>" ("adam/dense_kernel_momentum"); see optimizers_test.
  std::vector<VariablePtr> variables() const;
  // The slot `slot_name` ("momentum", "velocity", ...) the optimizer keeps for `var`; null when it keeps
  // none (not built, or a slot this configuration does not use: SGD without momentum).
  VariablePtr slot(const Variable& var, const std::string& slot_name) const;
  // Keras 3 get_config(): name, learning_rate (or the schedule's {"module", "class_name", "config"...}),
  // weight_decay, clipnorm, global_clipnorm, clipvalue, use_ema, ..., plus the class's keys.
  Json get_config() const;

 protected:
  // Adds a slot for `var`, zero (or `initial`), named as Keras names it (e.g. "momentum", "velocity").
  VariablePtr add_slot(const Variable& var, const std::string& slot_name, float initial = 0.f);
  // Adds an optimizer variable not tied to a model variable (Nadam's u_product); path "<name>/<var_name>".
  VariablePtr add_variable(const std::string& var_name, const Shape& shape, float initial,
                           DType dtype = DType::float32);
  // Called once per apply_gradients before update_steps (Keras's _backend_update_step; Nadam updates
  // its u_product there). step as in update_step.
  virtual void before_update_steps(double step) {}
  // Create the slots for vars, in Keras's order.
  virtual void do_build(const std::vector<VariablePtr>& vars) = 0;
  // Update variable `index` of the built list in place with its (clipped) gradient. lr: this step's
  // learning rate; step: iterations() + 1 as a float, as Keras's `local_step`.
  virtual void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) = 0;
  // Every variable's update of one step, after before_update_steps. By default update_step on each in
  // turn; Adam and SGD update all of them in one pass split between the threads (update_ranges).
  virtual void update_steps(const std::vector<Update>& updates, float lr, double step);
  // f(k, begin, end) over the elements of updates[k] for every k: one loop over all the variables'
  // elements, split between the engine's threads by elements (one fork and join a step, not one a
  // variable), each element computed as on one thread.
  template <typename F>
  static void update_ranges(const std::vector<Update>& updates, F&& f);
  // The class's own config keys (beta_1, ...), merged into get_config().
  virtual Json own_config() const = 0;

  Json config_;

 private:
  // apply_gradients' steps: clip, weight decay and update_steps (one_by_one: one variable a call, in
  // order, where two entries share storage); then averages and the call counter.
  void clip_and_update(std::vector<Update>& updates, bool one_by_one);
  // update_ranges' loop, with f behind a function pointer (in optimizer.cpp, beside the thread pool).
  using RangeBody = void (*)(void* body, size_t k, int64_t begin, int64_t end);
  static void for_update_ranges(const std::vector<Update>& updates, RangeBody run, void* body);
  void finish_step();

  std::string name_;
  bool built_ = false;
  SchedulePtr schedule_;
  VariablePtr iterations_, learning_rate_;
  std::vector<VariablePtr> slots_;  // in creation order
  std::vector<const Variable*> built_for_;
  std::vector<VariablePtr> built_vars_;
  // use_ema: a moving average per variable ("<var>_average"), every ema_overwrite_frequency steps
  // copied into the variables. gradient_accumulation_steps: the gradients summed in
  // "<var>_gradient_accumulator" and applied, averaged, every N-th call.
  bool use_ema_ = false;
  double ema_momentum_ = 0.99;
  int64_t ema_overwrite_frequency_ = 0, accumulation_steps_ = 0;
  std::vector<VariablePtr> averages_, accumulators_;
  double clipnorm_ = -1, clipvalue_ = -1, global_clipnorm_ = -1, weight_decay_ = 0;
};

template <typename F>
void Optimizer::update_ranges(const std::vector<Update>& updates, F&& f) {
  for_update_ranges(
      updates,
      [](void* body, size_t k, int64_t b, int64_t e) { (*static_cast<std::remove_reference_t<F>*>(body))(k, b, e); },
      &f);
}

using OptimizerPtr = std::shared_ptr<Optimizer>;

// By name ("sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "lion";
// any case) with Keras defaults, or {"class_name", "config"} (Keras 2 or 3). ValueError naming the
// unknown optimizer.
OptimizerPtr get(const Json& identifier);
// The lowercase names get() takes, and each class's arguments (one list: optimizer_list.inc).
std::vector<std::string> known_optimizers();
std::vector<ClassInfo> optimizer_classes();
// Every schedule schedule_from_config() makes (one list: schedule_list.inc).
std::vector<ClassInfo> schedule_classes();

}  // namespace kerascpp::optimizers
