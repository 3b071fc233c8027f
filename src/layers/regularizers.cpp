#include "layers/regularizers.h"

#include "ops/ops.h"

namespace kerascpp::layers {

namespace {
Tensor sum_all(const Tensor& x) { return ops::sum(x.reshape({x.size()}), 0); }
float number(const Json& c, const char* key, float fallback) {
  auto it = c.find(key);
  return it == c.end() || it->is_null() ? fallback : it->get<float>();
}
}  // namespace

Tensor Regularizer::penalty(const Tensor& x) const {
  KCPP_CHECK(unsupported.empty(), NotImplementedError, unsupported);
  Tensor total;
  if (l1 != 0.f) total = ops::scale_shift(sum_all(ops::unary(ops::UnaryOp::abs, x)), l1, 0.f);
  if (l2 != 0.f) {
    Tensor t = ops::scale_shift(sum_all(ops::unary(ops::UnaryOp::square, x)), l2, 0.f);
    total = total.defined() ? ops::binary(ops::BinaryOp::add, total, t) : t;
  }
  return total.defined() ? total : Tensor::zeros({});
}

// keras/src/regularizers/regularizers.py: L1(l1=0.01), L2(l2=0.01), L1L2(l1=0.0, l2=0.0); the names
// "l1" and "l2" are those classes with their defaults.
Regularizer regularizer_from_config(const Json& j, const std::string& who) {
  if (j.is_null()) return {};
  std::string cls;
  Json cfg = Json::object();
  if (j.is_string()) {
    cls = j.get<std::string>();
  } else if (j.is_object() && j.contains("class_name")) {
    cls = j["class_name"].get<std::string>();
    cfg = j.value("config", Json::object());
  }
  try {
    if (cls == "L1" || cls == "l1") return {number(cfg, "l1", 0.01f), 0.f};
    if (cls == "L2" || cls == "l2") return {0.f, number(cfg, "l2", 0.01f)};
    if (cls == "L1L2" || cls == "l1_l2") return {number(cfg, "l1", 0.f), number(cfg, "l2", 0.f)};
  } catch (const Json::exception&) {
    KCPP_THROW(ValueError, who, ": invalid regularizer config ", j.dump());
  }
  Regularizer r;
  r.unsupported = ::kerascpp::detail::concat(who, " uses the regularizer ", j.dump().substr(0, 200),
                                             ", which kerascpp cannot train with (supported: L1, L2, L1L2)");
  return r;
}

Tensor activity_loss(float l1, float l2, const Tensor& x) {
  Regularizer r;
  r.l1 = l1, r.l2 = l2;
  Tensor p = r.penalty(x);
  const float batch = x.rank() > 0 && x.dim(0) > 0 ? static_cast<float>(x.dim(0)) : 1.f;
  return ops::scale_shift(p, 1.f / batch, 0.f);
}

}  // namespace kerascpp::layers
