// Losses: the keras.losses classes, with Keras 3's reductions.
//
// A loss is built from ops, so a GradientTape differentiates it with no code of its own. call()
// gives the per-sample losses (Keras's Loss.call: the last axis reduced); operator() multiplies by
// sample_weight and reduces, as Keras's Loss.__call__ (keras/src/losses/loss.py).
//
//   losses::LossPtr mse = losses::get("mse");
//   Tensor l = (*mse)(y_true, y_pred);                  // scalar
//   auto cce = losses::get(Json{{"class_name", "CategoricalCrossentropy"},
//                               {"config", {{"from_logits", true}, {"label_smoothing", 0.1}}}});
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kerascpp/class_info.h"
#include "kerascpp/tensor.h"

namespace kerascpp {
class Model;
}

namespace kerascpp::losses {

using Json = nlohmann::json;

// keras/src/losses/loss.py reductions. mean is sum_over_batch_size by another name;
// mean_with_sample_weight divides by the sum of the sample weights (Keras 3.11+).
enum class Reduction { sum_over_batch_size, sum, none, mean, mean_with_sample_weight };

class Loss {
 public:
  // config: Keras 3 keys of the class ("name", "reduction", "from_logits", "label_smoothing", "delta"...).
  explicit Loss(const Json& config, const std::string& default_name);
  virtual ~Loss() = default;

  virtual std::string class_name() const = 0;  // "MeanSquaredError"
  const std::string& name() const { return name_; }
  Reduction reduction() const { return reduction_; }

  // Per-sample losses (batch, ...) with the last axis reduced where Keras reduces it. y_true may be
  // of any dtype (sparse labels are integers); it is converted as Keras converts it. ValueError
  // naming the loss when the shapes do not fit.
  virtual Tensor call(const Tensor& y_true, const Tensor& y_pred) const = 0;
  // call(), weighted by sample_weight (broadcast over the per-sample losses; undefined: 1) and
  // reduced: a scalar for sum_over_batch_size and sum, the weighted losses for none.
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight = Tensor()) const;
  // The mask Keras attaches to call()'s result (1 where an entry counts, 0 where it is ignored, the
  // shape of call()'s result), or undefined: SparseCategoricalCrossentropy's ignore_class. operator()
  // weights by it as Keras's apply_mask does (a mean then divides by the entries that count).
  virtual Tensor keras_mask(const Tensor& y_true, const Tensor& y_pred) const;

  // Keras 3's get_config(): {"name": ..., "reduction": ..., plus the class's options}.
  virtual Json get_config() const;
  // The loss as compile_config records it: {"module": "keras.losses", "class_name", "config",
  // "registered_name"}, or a function's own form (from_function).
  virtual Json serialize() const;

 protected:
  Json config_;

 private:
  std::string name_;
  Reduction reduction_ = Reduction::sum_over_batch_size;
};

using LossPtr = std::shared_ptr<Loss>;

// A loss by Keras identifier: a function name ("mse", "mean_squared_error",
// "sparse_categorical_crossentropy", "huber", "kld"...), a class name ("MeanSquaredError"), or a
// {"class_name", "config"} object (Keras 2 and 3 configs). ValueError naming the identifier and
// listing the known ones.
LossPtr get(const Json& identifier);
// Traces a Python function again for y_true of another shape (batch -1), as Keras traces a function
// anew for each shape it meets (sparse labels against a (batch, classes) output). Empty: the function
// runs only on the shapes it was traced for.
using Retrace = std::function<std::shared_ptr<const Model>(const Shape& y_true_shape)>;

// A loss written as a function of keras.ops (Keras wraps one in LossFunctionWrapper): `function` is a
// model of two inputs, y_true and y_pred (float32, the shape of y_pred), whose output holds the
// per-sample losses; the Python package traces the user's function into it once, on symbolic
// tensors. The loss is reduced with the sample weights as every loss; its gradient is the graph's.
// config: {"name": the function's, "reduction"}; serialized: how compile_config records the function.
LossPtr from_function(std::shared_ptr<const Model> function, const Json& config, const Json& serialized,
                      Retrace retrace = {});

// The traced versions of one function (a loss's or a metric's): the one traced at compile and those
// traced later for other y_true shapes, kept for the next batches. Thread-safe.
class FunctionTraces {
 public:
  // what: "Loss" or "Metric"; name: the function's, for errors.
  FunctionTraces(std::shared_ptr<const Model> first, Retrace retrace, const char* what, std::string name);
  // The traced function for this batch and y_true as it sees it: for a loss brought to the rank of
  // y_pred as Keras's squeeze_or_expand_to_same_rank does, for a metric as it is (MeanMetricWrapper).
  // ValueError naming the function when the shapes fit no trace and it cannot be traced again.
  std::pair<std::shared_ptr<const Model>, Tensor> for_batch(const Tensor& y_true, const Tensor& y_pred) const;

 private:
  std::shared_ptr<const Model> first_;
  Retrace retrace_;
  const char* what_;
  std::string name_;
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<const Model>> retraced_;  // by y_true's shape, batch -1
};

// Every class name get() knows, and each class's arguments and functions (one list: loss_list.inc).
std::vector<std::string> known_losses();
std::vector<ClassInfo> loss_classes();

}  // namespace kerascpp::losses
