// lstm_step: one LSTM step as one op (a stacked cell's step in training): lstm_sequence over a
// sequence of one step, so that the step, the whole-sequence op and the inference loop run one
// forward (kernels::lstm_step) and one written-out backward.
#include "ops/checks.h"
#include "ops/ops.h"

namespace kerascpp::ops {

Tensor lstm_step(const Tensor& xp, const Tensor& h, const Tensor& c, const Tensor& u, const Tensor& rm, UnaryOp act,
                 UnaryOp ract) {
  for (const Tensor* t : {&xp, &h, &c, &u}) detail::check_float32("lstm_step", *t, "input");
  KCPP_CHECK(h.rank() == 2 && xp.rank() == 2 && xp.dim(0) == h.dim(0) && xp.dim(1) == 4 * h.dim(1), ValueError,
             "lstm_step: shapes do not fit: xp ", shape_str(xp.shape()), ", h ", shape_str(h.shape()), ", c ",
             shape_str(c.shape()), ", recurrent kernel ", shape_str(u.shape()));
  const int64_t batch = h.dim(0), units = h.dim(1);
  const Tensor packed = lstm_sequence(xp.reshape({batch, 1, 4 * units}), h, c, u, rm, Tensor(), false, false, act, ract);
  return slice(packed, {0, 0, units}, {batch, 1, 2 * units}).reshape({batch, 2 * units});  // [h' | c']
}

}  // namespace kerascpp::ops
