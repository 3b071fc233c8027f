// PlanCache: the prepared kernels (oneDNN primitives with their re-laid-out weights) of one layer,
// one per input shape and weight version.
//
// A layer owns one cache per op it calls (a `mutable` member; the key is the input shape and the
// weights, not the options) and passes it to that op on every call, so plans die
// with the model and nothing process-wide grows (design §1). The cache is bounded: a model fed many
// different batch sizes keeps the most recent kMaxPlans plans. Safe to use from concurrent calls.
//
//   mutable ops::PlanCache plans_;
//   y = ops::conv(x, kernel_->value(), bias, options_, &plans_, kernel_->version());
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace kerascpp::ops {

class PlanCache {
 public:
  static constexpr size_t kMaxPlans = 8;

  PlanCache() = default;
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  // The plan stored under key, or nullptr.
  std::shared_ptr<const void> find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, plan] : plans_)
      if (k == key) return plan;
    return nullptr;
  }
  // Stores a plan (two threads racing to make the same plan both store it; either copy is valid).
  void put(std::string key, std::shared_ptr<const void> plan) {
    std::lock_guard<std::mutex> lock(mu_);
    plans_.emplace_back(std::move(key), std::move(plan));
    if (plans_.size() > kMaxPlans) plans_.pop_front();
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return plans_.size();
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::pair<std::string, std::shared_ptr<const void>>> plans_;
};

}  // namespace kerascpp::ops
