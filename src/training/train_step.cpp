// The train and test steps (keras/src/backend/tensorflow/trainer.py train_step / test_step):
//   loss = sum over outputs of loss_weight * loss(y, y_pred, sample_weight)
//          + weight regularisation + activity regularisation;
// the loss tracker is weighted by the batch size; metrics are updated unweighted, weighted_metrics
// with the batch's sample weights.
#include <cmath>
#include <cstring>

#include "kerascpp/autodiff.h"
#include "models/functional.h"
#include "ops/ops.h"
#include "ops/tape.h"
#include "training/compiled.h"
#include "training/distribute/replicas.h"

namespace kerascpp::training {
namespace {

float scalar_value(const Tensor& t) { return t.data<float>()[0]; }

// Inputs as the model computes in float32 (integer ids beyond 2^24 refused, as predict does).
std::vector<Tensor> as_float(const Model& model, const Compiled& c, const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const Tensor& t : xs) out.push_back(models::float32_input(t, c.integer_ids, model.name()));
  return out;
}

// The step's loss from the model's outputs; per-output losses (unweighted) into *parts.
Tensor total_loss(const Compiled& c, const Batch& b, const std::vector<Tensor>& outs,
                  const std::vector<Tensor>& extra, std::vector<float>* parts) {
  Tensor total;
  auto add = [&](const Tensor& t) { total = total.defined() ? ops::binary(ops::BinaryOp::add, total, t) : t; };
  for (size_t o = 0; o < outs.size(); ++o) {
    if (!c.losses[o]) continue;
    Tensor l = (*c.losses[o])(b.y[o], outs[o], b.sample_weight);
    parts->push_back(scalar_value(l));
    add(c.loss_weights[o] == 1.0 ? l : ops::scale_shift(l, static_cast<float>(c.loss_weights[o]), 0.f));
  }
  for (const auto& [v, r] : c.weight_regularizers) add(r.penalty(v->value()));
  for (const Tensor& t : extra) add(t.size() == 1 ? t.reshape({}) : ops::sum(t.reshape({t.size()}), 0));
  KCPP_CHECK(total.defined(), ValueError, "No loss to compute. Provide a `loss` argument in `compile()`.");
  return total.size() == 1 ? total.reshape({}) : total;
}

void track(Compiled& c, const Batch& b, const std::vector<Tensor>& outs, float loss, const std::vector<float>& parts) {
  ops::NoRecord pause;
  const double batch = static_cast<double>(b.x[0].dim(0));
  c.loss_tracker.add(loss, batch);
  for (size_t i = 0; i < c.output_loss_trackers.size() && i < parts.size(); ++i)
    c.output_loss_trackers[i].add(parts[i], batch);
  for (size_t o = 0; o < outs.size(); ++o)
    for (auto& m : c.metrics[o]) m.metric->update_state(b.y[o], outs[o], m.weighted ? b.sample_weight : Tensor());
}

}  // namespace

const std::vector<VariablePtr>& trainable_weights(const Model& model, Compiled& c) {
  if (!c.trainable_taken) c.trainable = model.trainable_weights(), c.trainable_taken = true;
  return c.trainable;
}

bool train_step(Model& model, Compiled& c, const Batch& global, uint64_t seed, RnnStates* states, Replicas* replicas) {
  const std::vector<VariablePtr> trainable = trainable_weights(model, c);
  const Batch b = replicas ? replicas->local(global) : global;
  const int64_t rows = b.x.at(0).dim(0);
  std::vector<std::pair<VariablePtr, Tensor>> updates;
  std::vector<Tensor> extra;
  std::vector<float> parts;
  std::vector<Tensor> outs, grads;
  float loss_value = 0.f;
  const bool data_parallel = replicas && replicas->active();
  const bool computes = rows > 0 || !data_parallel;  // a worker of several may have no rows of a small batch
  if (computes) {
    GradientTape tape(false);  // frees each op's activations and gradients as the backward pass leaves them
    tape.watch(trainable);
    CallContext ctx;
    ctx.training = true, ctx.updates = &updates, ctx.losses = &extra, ctx.seed = seed, ctx.rnn_states = states;
    outs = model.graph().call(as_float(model, c, b.x), ctx);
    Tensor loss = total_loss(c, b, outs, extra, &parts);
    tape.stop_recording();
    loss_value = scalar_value(loss);
    if (std::isfinite(loss_value)) grads = tape.gradient(loss, trainable);
  }  // the tape, and whatever it still kept, is freed here
  const std::vector<double> tracked_before = data_parallel ? Replicas::trackers(c) : std::vector<double>();
  if (computes) track(c, b, outs, loss_value, parts);
  const bool finite = data_parallel ? replicas->reduce(c, &grads, trainable, &updates, rows, global.x.at(0).dim(0),
                                                  std::isfinite(loss_value), tracked_before)
                               : std::isfinite(loss_value);
  if (!finite) return false;
  if (!trainable.empty()) c.optimizer->apply_gradients(grads, trainable);
  for (auto& [v, k] : c.weight_constraints) v->assign(k.apply(v->value()));  // as Keras's optimizer, after the update
  for (auto& [v, value] : updates) v->assign(value);
  return true;
}

void test_step(const Model& model, Compiled& c, const Batch& global, RnnStates* states, Replicas* replicas) {
  ops::NoRecord pause;
  const Batch b = replicas ? replicas->local(global) : global;
  if (b.x.at(0).dim(0) == 0 && replicas && replicas->active()) return;  // a worker without rows of a small batch
  std::vector<Tensor> extra;
  std::vector<float> parts;
  CallContext ctx;
  ctx.losses = &extra;
  ctx.rnn_states = states;
  std::vector<Tensor> outs = model.graph().call(as_float(model, c, b.x), ctx);
  Tensor loss = total_loss(c, b, outs, extra, &parts);
  track(c, b, outs, scalar_value(loss), parts);
}

Logs results(const Compiled& c, const std::string& prefix) {
  Logs logs;
  logs.set(prefix + "loss", c.loss_tracker.result());
  for (const auto& t : c.output_loss_trackers) logs.set(prefix + t.name(), t.result());
  for (bool weighted : {false, true})  // Keras's CompileMetrics.result(): the metrics, then the weighted ones
    for (const auto& per_output : c.metrics)
      for (const auto& m : per_output)
        if (m.weighted != weighted) {
          continue;
        } else if (m.metric->array_result()) {
          logs.set_array(prefix + m.log_name, m.metric->result_array());
        } else {
          logs.set(prefix + m.log_name, m.metric->result());
        }
  return logs;
}

void reset(Compiled& c) {
  c.loss_tracker.reset_state();
  for (auto& t : c.output_loss_trackers) t.reset_state();
  for (auto& per_output : c.metrics)
    for (auto& m : per_output) m.metric->reset_state();
}

Tensor take_rows(const Tensor& t, const std::vector<int64_t>* indices, int64_t start, int64_t count) {
  if (!indices) return t.slice(start, count);
  Shape s = t.shape();
  s[0] = count;
  Tensor out = Tensor::empty(s, t.dtype());
  const size_t row = t.dim(0) > 0 ? t.nbytes() / static_cast<size_t>(t.dim(0)) : 0;
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(static_cast<char*>(out.raw_data()) + i * row,
                static_cast<const char*>(t.raw_data()) + (*indices)[start + i] * row, row);
  return out;
}

}  // namespace kerascpp::training
