// keras.optimizers.schedules (keras/src/optimizers/schedules/learning_rate_schedule.py):
// ExponentialDecay, PiecewiseConstantDecay, CosineDecay, PolynomialDecay, InverseTimeDecay,
// CosineDecayRestarts. Keras computes them in float32 (the
// initial learning rate becomes a float32 tensor and everything is cast to its dtype), so do we;
// operator() returns that float32 value.
#include <algorithm>
#include <cmath>

#include "core/naming.h"
#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;
using detail::number;

// Keras's schedule kwargs plus its defaults; anything else is rejected as the constructor would.
Json schedule_config(const std::string& cls, const Json& config, const Json& defaults,
                     std::initializer_list<const char*> required) {
  KCPP_CHECK(config.is_object(), ValueError, cls, " config must be a dict. Received: ", config.dump());
  Json c = defaults;
  for (const char* k : required) {
    KCPP_CHECK(config.contains(k), ValueError, cls, " config is missing the required argument `", k,
               "`. Received: ", config.dump());
    c[k] = nullptr;
  }
  for (const auto& [k, v] : config.items()) {
    KCPP_CHECK(c.contains(k), ValueError, cls, ": unrecognized argument `", k, "`. Received: ", config.dump());
    c[k] = v;
  }
  return c;
}

// A schedule's step count (decay_steps, first_decay_steps) as float32, checked > 0 as Keras's constructors do.
float positive_steps(const Json& c, const char* key) {
  KCPP_CHECK(number(c, key) > 0, ValueError, "Argument `", key, "` must be > 0. Received: ", key, "=", c[key].dump());
  return f32(number(c, key));
}

// ExponentialDecay and InverseTimeDecay: initial_learning_rate, decay_steps, decay_rate, staircase;
// p = step / decay_steps (floored with staircase), in float32.
class StepDecay : public LearningRateSchedule {
 public:
  StepDecay(const char* cls, const Json& config)
      : cls_(cls), c_(schedule_config(cls, config, {{"staircase", false}, {"name", cls}},
                                      {"initial_learning_rate", "decay_steps", "decay_rate"})) {
    initial_ = f32(number(c_, "initial_learning_rate"));
    decay_steps_ = positive_steps(c_, "decay_steps");
    decay_rate_ = f32(number(c_, "decay_rate"));
    staircase_ = c_["staircase"].is_boolean() && c_["staircase"].get<bool>();
  }
  std::string class_name() const override { return cls_; }
  Json get_config() const override {
    return detail::pick(c_, {"initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"});
  }

 protected:
  float progress(int64_t step) const {
    const float p = static_cast<float>(step) / decay_steps_;
    return staircase_ ? std::floor(p) : p;
  }
  std::string cls_;
  Json c_;
  float initial_, decay_steps_, decay_rate_;
  bool staircase_;
};

class ExponentialDecay final : public StepDecay {
 public:
  explicit ExponentialDecay(const Json& config) : StepDecay("ExponentialDecay", config) {}
  double operator()(int64_t step) const override { return initial_ * std::pow(decay_rate_, progress(step)); }
};

class PiecewiseConstantDecay final : public LearningRateSchedule {
 public:
  explicit PiecewiseConstantDecay(const Json& config)
      : c_(schedule_config("PiecewiseConstantDecay", config, {{"name", "PiecewiseConstant"}},
                           {"boundaries", "values"})) {
    KCPP_CHECK(c_["boundaries"].is_array() && c_["values"].is_array(), ValueError,
               "PiecewiseConstantDecay: `boundaries` and `values` must be lists. Received: ", config.dump());
    KCPP_CHECK(c_["boundaries"].size() + 1 == c_["values"].size(), ValueError,
               "The length of boundaries should be 1 less than the length of values. Received: boundaries=",
               c_["boundaries"].dump(), " of length ", c_["boundaries"].size(), ", and values=",
               c_["values"].dump(), " of length ", c_["values"].size(), ".");
    KCPP_CHECK(!c_["boundaries"].empty(), ValueError, "PiecewiseConstantDecay needs at least one boundary.");
    for (const Json& b : c_["boundaries"]) {
      KCPP_CHECK(b.is_number(), ValueError, "PiecewiseConstantDecay: boundaries must be numbers. Received: ",
                 b.dump());
      // The step is int64: float boundaries are cast to it (truncation), integer ones kept.
      boundaries_.push_back(b.is_number_integer() ? b.get<int64_t>()
                                                  : static_cast<int64_t>(f32(b.get<double>())));
    }
    for (const Json& v : c_["values"]) {
      KCPP_CHECK(v.is_number(), ValueError, "PiecewiseConstantDecay: values must be numbers. Received: ",
                 v.dump());
      values_.push_back(f32(v.get<double>()));
    }
  }
  std::string class_name() const override { return "PiecewiseConstantDecay"; }
  double operator()(int64_t step) const override {
    // Keras sums indicator * value over the ranges; one indicator is 1 for sorted boundaries.
    float r = 0.f;
    r += static_cast<float>(step <= boundaries_.front()) * values_.front();
    r += static_cast<float>(step > boundaries_.back()) * values_.back();
    for (size_t i = 0; i + 1 < boundaries_.size(); ++i)
      r += static_cast<float>(step > boundaries_[i] && step <= boundaries_[i + 1]) * values_[i + 1];
    return r;
  }
  Json get_config() const override { return detail::pick(c_, {"boundaries", "values", "name"}); }

 private:
  Json c_;
  std::vector<int64_t> boundaries_;
  std::vector<float> values_;
};

class CosineDecay final : public LearningRateSchedule {
 public:
  explicit CosineDecay(const Json& config)
      : c_(schedule_config("CosineDecay", config,
                           {{"alpha", 0.0}, {"name", "CosineDecay"}, {"warmup_target", nullptr}, {"warmup_steps", 0}},
                           {"initial_learning_rate", "decay_steps"})) {
    initial_ = f32(number(c_, "initial_learning_rate"));
    decay_steps_ = positive_steps(c_, "decay_steps");
    alpha_ = number(c_, "alpha");
    warmup_ = !c_["warmup_target"].is_null();
    if (warmup_) {
      warmup_target_ = f32(number(c_, "warmup_target"));
      warmup_steps_ = f32(number(c_, "warmup_steps"));
    }
  }
  std::string class_name() const override { return "CosineDecay"; }
  double operator()(int64_t s) const override {
    float step = static_cast<float>(s);
    if (!warmup_) return decay(std::min(step, decay_steps_), initial_);
    step = std::min(step, decay_steps_ + warmup_steps_);
    if (step < warmup_steps_) {
      const float completed = step / warmup_steps_;
      const float total_delta = warmup_target_ - initial_;
      return total_delta * completed + initial_;
    }
    return decay(step - warmup_steps_, warmup_target_);
  }
  Json get_config() const override {
    return detail::pick(c_, {"initial_learning_rate", "decay_steps", "alpha", "name", "warmup_target", "warmup_steps"});
  }

 private:
  // CosineDecay._decay_function; (1 - alpha) is a Python double multiplied into a float32 tensor.
  float decay(float step, float from_lr) const {
    const float completed = step / decay_steps_;
    const float pi = f32(M_PI);
    const float cosine_decayed = 0.5f * (1.0f + std::cos(pi * completed));
    const float decayed = f32(1.0 - alpha_) * cosine_decayed + f32(alpha_);
    return from_lr * decayed;
  }
  Json c_;
  float initial_, decay_steps_, warmup_target_ = 0.f, warmup_steps_ = 0.f;
  double alpha_;
  bool warmup_;
};

class PolynomialDecay final : public LearningRateSchedule {
 public:
  explicit PolynomialDecay(const Json& config)
      : c_(schedule_config("PolynomialDecay", config,
                           {{"end_learning_rate", 0.0001}, {"power", 1.0}, {"cycle", false}, {"name", "PolynomialDecay"}},
                           {"initial_learning_rate", "decay_steps"})) {
    initial_ = f32(number(c_, "initial_learning_rate"));
    decay_steps_ = positive_steps(c_, "decay_steps");
    end_ = f32(number(c_, "end_learning_rate"));
    power_ = f32(number(c_, "power"));
    cycle_ = c_["cycle"].is_boolean() && c_["cycle"].get<bool>();
  }
  std::string class_name() const override { return "PolynomialDecay"; }
  double operator()(int64_t s) const override {
    float step = static_cast<float>(s), decay_steps = decay_steps_;
    if (cycle_) {
      decay_steps *= step == 0 ? 1.f : std::ceil(step / decay_steps_);
    } else {
      step = std::min(step, decay_steps);
    }
    const float p = step / decay_steps;
    return (initial_ - end_) * std::pow(1.f - p, power_) + end_;
  }
  Json get_config() const override {
    return detail::pick(c_, {"initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle", "name"});
  }

 private:
  Json c_;
  float initial_, decay_steps_, end_, power_;
  bool cycle_;
};

class InverseTimeDecay final : public StepDecay {
 public:
  explicit InverseTimeDecay(const Json& config) : StepDecay("InverseTimeDecay", config) {}
  double operator()(int64_t step) const override { return initial_ / (1.f + decay_rate_ * progress(step)); }
};

// SGDR: cosine decay restarted after first_decay_steps, then t_mul times longer each time, each
// restart's peak m_mul times the previous one.
class CosineDecayRestarts final : public LearningRateSchedule {
 public:
  explicit CosineDecayRestarts(const Json& config)
      : c_(schedule_config("CosineDecayRestarts", config,
                           {{"t_mul", 2.0}, {"m_mul", 1.0}, {"alpha", 0.0}, {"name", "SGDRDecay"}},
                           {"initial_learning_rate", "first_decay_steps"})) {
    initial_ = f32(number(c_, "initial_learning_rate"));
    first_ = positive_steps(c_, "first_decay_steps");
    alpha_ = f32(number(c_, "alpha"));
    t_mul_ = f32(number(c_, "t_mul"));
    m_mul_ = f32(number(c_, "m_mul"));
  }
  std::string class_name() const override { return "CosineDecayRestarts"; }
  double operator()(int64_t step) const override {
    float completed = static_cast<float>(step) / first_, i_restart;
    if (t_mul_ == 1.f) {
      i_restart = std::floor(completed);
      completed -= i_restart;
    } else {  // the restart whose geometric sum of lengths covers the step
      i_restart = std::floor(std::log(1.f - completed * (1.f - t_mul_)) / std::log(t_mul_));
      const float sum_r = (1.f - std::pow(t_mul_, i_restart)) / (1.f - t_mul_);
      completed = (completed - sum_r) / std::pow(t_mul_, i_restart);
    }
    const float m_fac = std::pow(m_mul_, i_restart);
    const float cosine_decayed = 0.5f * m_fac * (1.f + std::cos(f32(M_PI) * completed));
    return initial_ * ((1.f - alpha_) * cosine_decayed + alpha_);
  }
  Json get_config() const override {
    return detail::pick(c_, {"initial_learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha", "name"});
  }

 private:
  Json c_;
  float initial_, first_, alpha_, t_mul_, m_mul_;
};

std::string known_list() {
  std::string s;
#define KCPP_SCHEDULE(name, args) s += (s.empty() ? "" : ", ") + std::string(#name);
#include "training/optimizers/schedule_list.inc"
#undef KCPP_SCHEDULE
  return s;
}

}  // namespace

SchedulePtr schedule_from_config(const Json& config) {
  KCPP_CHECK(config.is_object() && config.contains("class_name") && config["class_name"].is_string(), ValueError,
             "Could not interpret learning rate schedule: ", config.dump());
  const std::string cls = config["class_name"].get<std::string>();
  const Json c = config.contains("config") ? config["config"] : Json::object();
#define KCPP_SCHEDULE(name, args) \
  if (cls == #name) return std::make_shared<name>(c);
#include "training/optimizers/schedule_list.inc"
#undef KCPP_SCHEDULE
  KCPP_THROW(ValueError, "Unknown learning rate schedule: '", cls, "'. Known: ", known_list(), ".");
}

std::vector<ClassInfo> schedule_classes() {
  return {
#define KCPP_SCHEDULE(name, args) {#name, split_words(args), {}},
#include "training/optimizers/schedule_list.inc"
#undef KCPP_SCHEDULE
  };
}

}  // namespace kerascpp::optimizers
