// keras.losses.CTC (keras/src/losses/losses.py ctc, over tf.nn.ctc_loss with dense labels): the
// negative log-probability of each sample's label sequence under the logits y_pred (batch, time,
// classes), summed over every alignment (Graves et al. 2006). Class 0 is the blank and also pads the
// labels y_true (batch, max_label_length): a sample's label length is its count of non-zero entries,
// its logit length the whole time axis, as Keras's ctc() passes them. The forward-backward recursion
// runs in log space in double precision; the gradient with respect to the logits is the softmax minus
// each class's posterior occupancy, recorded as one op. As TensorFlow, a path may end in a state other
// than the last two at a cost of log(1e-307): a label sequence no alignment can produce (too long for
// the time axis) has a loss of about 707 and the gradient of that, as in Keras.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/tape.h"
#include "training/losses/loss_classes.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses::detail {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// tf.nn.ctc_loss's log of zero for the states a path may not end in: float32(log(1e-307)). A label no
// alignment can produce thus costs about 707 plus its paths' cost, finite as in Keras, not infinite.
const double kLogZero = static_cast<float>(std::log(1e-307));

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// One sample: -log p(labels | logits) and, when grad is given, d loss / d logits (time x classes).
double ctc_sample(const float* logits, int64_t steps, int64_t classes, const std::vector<int64_t>& labels,
                  float* grad) {
  // log_softmax per step
  std::vector<double> lp(static_cast<size_t>(steps * classes));
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = logits + t * classes;
    double m = row[0];
    for (int64_t k = 1; k < classes; ++k) m = std::max(m, static_cast<double>(row[k]));
    double sum = 0;
    for (int64_t k = 0; k < classes; ++k) sum += std::exp(static_cast<double>(row[k]) - m);
    const double lse = m + std::log(sum);
    for (int64_t k = 0; k < classes; ++k) lp[t * classes + k] = static_cast<double>(row[k]) - lse;
  }
  // The extended sequence: blank, l1, blank, l2, ..., blank.
  const int64_t S = 2 * static_cast<int64_t>(labels.size()) + 1;
  auto sym = [&](int64_t s) { return s % 2 == 0 ? int64_t{0} : labels[static_cast<size_t>(s / 2)]; };
  auto skip_ok = [&](int64_t s) { return s >= 2 && sym(s) != 0 && sym(s) != sym(s - 2); };
  std::vector<double> alpha(static_cast<size_t>(steps * S), kNegInf), beta(alpha.size(), kNegInf);
  if (steps == 0) {
    return labels.empty() ? 0.0 : -kLogZero;
  }
  alpha[0] = lp[sym(0)];
  if (S > 1) alpha[1] = lp[sym(1)];
  for (int64_t t = 1; t < steps; ++t)
    for (int64_t s = 0; s < S; ++s) {
      double a = alpha[(t - 1) * S + s];
      if (s >= 1) a = log_add(a, alpha[(t - 1) * S + s - 1]);
      if (skip_ok(s)) a = log_add(a, alpha[(t - 1) * S + s - 2]);
      alpha[t * S + s] = a == kNegInf ? kNegInf : a + lp[t * classes + sym(s)];
    }
  const int64_t last = (steps - 1) * S;
  // beta without the emission at t: the log-probability of finishing from state s after step t; the
  // last two states end a path, the others at TensorFlow's log-zero cost.
  for (int64_t s = 0; s < S; ++s) beta[last + s] = s >= S - 2 ? 0.0 : kLogZero;
  double log_p = kNegInf;
  for (int64_t s = 0; s < S; ++s) log_p = log_add(log_p, alpha[last + s] == kNegInf ? kNegInf : alpha[last + s] + beta[last + s]);
  if (!grad) return -log_p;
  for (int64_t t = steps - 2; t >= 0; --t)
    for (int64_t s = 0; s < S; ++s) {
      auto next = [&](int64_t s2) { return beta[(t + 1) * S + s2] + lp[(t + 1) * classes + sym(s2)]; };
      double b = next(s);
      if (s + 1 < S) b = log_add(b, next(s + 1));
      if (s + 2 < S && skip_ok(s + 2)) b = log_add(b, next(s + 2));
      beta[t * S + s] = b;
    }
  std::vector<double> occupancy(static_cast<size_t>(classes));
  for (int64_t t = 0; t < steps; ++t) {
    std::fill(occupancy.begin(), occupancy.end(), kNegInf);
    for (int64_t s = 0; s < S; ++s) {
      double& o = occupancy[static_cast<size_t>(sym(s))];
      o = log_add(o, alpha[t * S + s] + beta[t * S + s]);
    }
    for (int64_t k = 0; k < classes; ++k)
      grad[t * classes + k] = static_cast<float>(std::exp(lp[t * classes + k]) - std::exp(occupancy[k] - log_p));
  }
  return -log_p;
}

class CTC : public Loss {
 public:
  explicit CTC(const Json& c) : Loss(c, "ctc") { check_keys(c, "CTC", {}); }
  std::string class_name() const override { return "CTC"; }

  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    KCPP_CHECK(y_true.rank() == 2, ValueError, "CTC: Targets `y_true` are expected to be a tensor of shape "
               "`(batch_size, max_length)` in integer format. Received: y_true.shape=", shape_str(y_true.shape()));
    KCPP_CHECK(y_pred.rank() == 3, ValueError, "CTC: Logits `y_pred` are expected to be a tensor of shape "
               "`(batch_size, max_length, num_classes)`. Received: y_pred.shape=", shape_str(y_pred.shape()));
    const int64_t batch = y_pred.dim(0), steps = y_pred.dim(1), classes = y_pred.dim(2);
    KCPP_CHECK(classes > 0, ValueError, "CTC: y_pred has no classes (shape ", shape_str(y_pred.shape()),
               "); class 0 is the blank.");
    KCPP_CHECK(y_true.dim(0) == batch, ValueError, "CTC: y_true has ", y_true.dim(0), " samples, y_pred ", batch,
               ". Received: y_true.shape=", shape_str(y_true.shape()), ", y_pred.shape=", shape_str(y_pred.shape()));
    const Tensor labels = y_true.dtype() == DType::float32 ? y_true : y_true.astype(DType::float32);
    const Tensor logits = y_pred.dtype() == DType::float32 ? y_pred : y_pred.astype(DType::float32);
    const int64_t width = labels.dim(1);
    Tensor loss = Tensor::empty({batch});
    const bool differentiate = ops::tape_for({&y_pred}) != nullptr;
    Tensor grad = differentiate ? Tensor::empty(logits.shape()) : Tensor();
    for (int64_t b = 0; b < batch; ++b) {
      // Keras: label_length = count of non-zero entries; tf.nn.ctc_loss reads that many from the start.
      const float* row = labels.data<float>() + b * width;
      int64_t length = 0;
      for (int64_t j = 0; j < width; ++j) length += row[j] != 0.f ? 1 : 0;
      std::vector<int64_t> seq;
      for (int64_t j = 0; j < length; ++j) {
        const double v = std::trunc(static_cast<double>(row[j]));  // tf.cast to int32 truncates
        KCPP_CHECK(v >= 0 && v < static_cast<double>(classes), ValueError, "CTC: sample ", b, " has the label ", row[j],
                   " at position ", j, ", outside [0, ", classes, ") for y_pred of ", classes, " classes.");
        // Keras counts the non-zero labels and reads that many from the start: a blank among them
        // would be read as a label. The padding goes at the end.
        KCPP_CHECK(v != 0, ValueError, "CTC: sample ", b, " has the blank 0 at position ", j, " (", row[j],
                   ") before its last label: labels are padded with 0 at the end only.");
        seq.push_back(static_cast<int64_t>(v));
      }
      loss.data<float>()[b] = static_cast<float>(ctc_sample(logits.data<float>() + b * steps * classes, steps, classes,
                                                            seq, differentiate ? grad.data<float>() + b * steps * classes
                                                                               : nullptr));
    }
    if (ops::Recorder* r = ops::tape_for({&y_pred})) {
      r->record("ctc_loss", {y_pred}, loss, [grad, batch, per = steps * classes](const Tensor& dy) {
        Tensor g = Tensor::empty(grad.shape());
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < per; ++i) g.data<float>()[b * per + i] = grad.data<float>()[b * per + i] * dy.data<float>()[b];
        return ops::Grads{g};
      });
    }
    return loss;
  }
};

}  // namespace

LossPtr make_ctc(const Json& c) { return std::make_shared<CTC>(c); }

}  // namespace kerascpp::losses::detail
