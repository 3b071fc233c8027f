#include "layers/rnn/rnn_cell.h"

#include <map>

#include "core/naming.h"
#include "layers/config_utils.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/recurrent.h"
#include "ops/ops.h"

#include <algorithm>

namespace kerascpp::layers {
namespace {

using ops::BinaryOp;

// The fast path's piece, the kernel its op uses, on contiguous buffers.
void add_into(float* y, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::add, a, b); }
// Both activations elementwise: what the raw-buffer steps need.
bool elementwise(const ActivationFn& a, const ActivationFn& b) {
  ops::UnaryOp x, y;
  return a.unary_op(&x) && b.unary_op(&y);
}
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::multiply, a, b); }
Tensor one_minus(const Tensor& a) { return ops::scale_shift(a, -1.f, 1.f); }

// keras.layers.SimpleRNNCell: h = activation(x @ kernel + bias + h_prev @ recurrent_kernel).
class SimpleRnnCell : public RnnCell {
 public:
  explicit SimpleRnnCell(const Json& c) : RnnCell(c, "SimpleRNNCell", 1) {}
  bool has_fast_step() const override { return elementwise(activation_, activation_); }
  std::vector<Tensor> step(const Tensor& xp, const std::vector<Tensor>& s, const Tensor& rm) const override {
    return {activation_(add(xp, recurrent(s[0], rm)))};
  }
  bool fast_step(const float* xp, const float* const* s, float* const* next, float* work,
                 int64_t batch) const override {
    const int64_t n = batch * units_;
    kernels::matmul(s[0], recurrent_kernel_->data<float>(), work, batch, units_, units_);
    add_into(next[0], xp, work, n);
    return activation_.apply_in_place(next[0], n);
  }
};

// keras.layers.LSTMCell, gates i, f, c, o: z = x @ kernel + bias + h @ recurrent_kernel;
// c = f * c_prev + i * activation(z_c), h = o * activation(c), i f o through recurrent_activation.
class LstmCell : public RnnCell {
 public:
  explicit LstmCell(const Json& c) : RnnCell(c, "LSTMCell", 4) {}
  bool has_fast_step() const override { return elementwise(activation_, recurrent_activation_); }
  size_t state_count() const override { return 2; }
  void initialize(std::mt19937_64& rng) override {
    RnnCell::initialize(rng);
    unit_forget_bias();
  }
  std::vector<Tensor> step(const Tensor& xp, const std::vector<Tensor>& s, const Tensor& rm) const override {
    ops::UnaryOp act, ract;
    if (activation_.unary_op(&act) && recurrent_activation_.unary_op(&ract)) {  // one op per step
      const Tensor hc = ops::lstm_step(xp, s[0], s[1], recurrent_kernel_->value(), rm, act, ract);
      const int64_t batch = xp.dim(0);
      return {ops::slice(hc, {0, 0}, {batch, units_}), ops::slice(hc, {0, units_}, {batch, units_})};
    }
    const Tensor z = add(xp, recurrent(s[0], rm));
    const Tensor i = recurrent_activation_(gate(z, 0)), f = recurrent_activation_(gate(z, 1));
    const Tensor c = add(mul(f, s[1]), mul(i, activation_(gate(z, 2))));
    const Tensor o = recurrent_activation_(gate(z, 3));
    return {mul(o, activation_(c)), c};
  }
  Tensor sequence(const Tensor& xp, const std::vector<Tensor>& s, const Tensor& rm, const Tensor& mask,
                  bool go_backwards, bool zero_output_for_mask) const override {
    ops::UnaryOp act, ract;
    if (!activation_.unary_op(&act) || !recurrent_activation_.unary_op(&ract)) return Tensor();
    return ops::lstm_sequence(xp, s[0], s[1], recurrent_kernel_->value(), rm, mask, go_backwards, zero_output_for_mask,
                              act, ract);
  }
  bool fast_step(const float* xp, const float* const* s, float* const* next, float* work,
                 int64_t batch) const override {
    ops::UnaryOp act, ract;
    if (!activation_.unary_op(&act) || !recurrent_activation_.unary_op(&ract)) return false;
    const int64_t n = batch * units_;  // work: z (4 n), the gates (4 n), act(c') (n)
    kernels::lstm_step(xp, s[0], s[1], recurrent_kernel_->data<float>(), batch, units_,
                       {act, ops::default_alpha(act), ract, ops::default_alpha(ract)}, work, work + 4 * n, nullptr,
                       work + 8 * n, next[0], next[1]);
    return true;
  }
};

// keras.layers.GRUCell, gates z, r, h. reset_after (Keras 3's default): the reset gate multiplies the
// recurrent product, which has its own bias (bias is (2, 3 * units): input, recurrent); otherwise it
// multiplies the state before its product and bias is (3 * units,).
class GruCell : public RnnCell {
 public:
  explicit GruCell(const Json& c) : RnnCell(c, "GRUCell", 3), reset_after_(get<bool>(c, "reset_after", true)) {}
  // reset_after=False: the reset gate sits inside a product of column slices; the op loop runs it.
  bool has_fast_step() const override { return reset_after_ && elementwise(activation_, recurrent_activation_); }
  Tensor project(const Tensor& x) const override {
    Tensor xp = ops::matmul(x, kernel_->value());
    if (use_bias_) xp = ops::bias_add(xp, input_bias());
    return xp;
  }
  std::vector<Tensor> step(const Tensor& xp, const std::vector<Tensor>& s, const Tensor& rm) const override {
    const Tensor& h = s[0];
    const Tensor hd = rm.defined() ? mul(h, rm) : h;
    const Tensor u = recurrent_kernel_->value();
    Tensor z, r, hh;
    if (reset_after_) {
      Tensor rec = ops::matmul(hd, u);
      if (use_bias_) rec = ops::bias_add(rec, bias_row(1));
      z = recurrent_activation_(add(gate(xp, 0), gate(rec, 0)));
      r = recurrent_activation_(add(gate(xp, 1), gate(rec, 1)));
      hh = activation_(add(gate(xp, 2), mul(r, gate(rec, 2))));
    } else {
      const Tensor rec_zr = ops::matmul(hd, ops::slice(u, {0, 0}, {units_, 2 * units_}));
      z = recurrent_activation_(add(gate(xp, 0), gate(rec_zr, 0)));
      r = recurrent_activation_(add(gate(xp, 1), gate(rec_zr, 1)));
      hh = activation_(add(gate(xp, 2), ops::matmul(mul(r, hd), ops::slice(u, {0, 2 * units_}, {units_, units_}))));
    }
    // h = z * h_prev + (1 - z) * hh
    return {add(mul(z, h), mul(one_minus(z), hh))};
  }
  Tensor sequence(const Tensor& xp, const std::vector<Tensor>& s, const Tensor& rm, const Tensor& mask,
                  bool go_backwards, bool zero_output_for_mask) const override {
    ops::UnaryOp act, ract;
    if (!reset_after_ || !activation_.unary_op(&act) || !recurrent_activation_.unary_op(&ract)) return Tensor();
    return ops::gru_sequence(xp, s[0], recurrent_kernel_->value(), use_bias_ ? bias_row(1) : Tensor(), rm, mask,
                             go_backwards, zero_output_for_mask, act, ract);
  }
  bool fast_step(const float* xp, const float* const* s, float* const* next, float* work,
                 int64_t batch) const override {
    ops::UnaryOp act, ract;
    // reset_after=False: the reset gate sits inside a product of column slices; the op path runs it.
    if (!reset_after_ || !activation_.unary_op(&act) || !recurrent_activation_.unary_op(&ract)) return false;
    const int64_t n = batch * units_;  // work: the recurrent product (3 n), the gates (3 n)
    const float* rb = use_bias_ ? bias_->data<float>() + 3 * units_ : nullptr;  // the recurrent row
    kernels::gru_step(xp, s[0], s[0], recurrent_kernel_->data<float>(), rb, batch, units_,
                      {act, ops::default_alpha(act), ract, ops::default_alpha(ract)}, work, work + 3 * n, nullptr,
                      next[0]);
    return true;
  }

 protected:
  Shape bias_shape() const override { return reset_after_ ? Shape{2, 3 * units_} : Shape{3 * units_}; }

 private:
  // Row r of the (2, 3 * units) bias, through ops so that the tape sees it.
  Tensor bias_row(int64_t r) const { return ops::slice(bias_->value(), {r, 0}, {1, 3 * units_}).reshape({3 * units_}); }
  Tensor input_bias() const { return reset_after_ ? bias_row(0) : bias_->value(); }
  bool reset_after_;
};

float rate(const Json& c, const char* key, const std::string& who) {
  const float r = get<float>(c, key, 0.f);
  KCPP_CHECK(r >= 0.f && r <= 1.f, ValueError, "Layer '", who, "': `", key, "` must be in [0, 1]. Received: ", key,
             "=", r);
  return r;
}

}  // namespace

RnnCell::RnnCell(Json given, std::string cls, int gates)
    : Layer(std::move(given)),
      cls_(std::move(cls)),
      units_(require<int64_t>(config(), "units")),
      gates_(gates),
      use_bias_(get<bool>(config(), "use_bias", true)),
      dropout_(rate(config(), "dropout", name())),
      recurrent_dropout_(rate(config(), "recurrent_dropout", name())),
      activation_(config().value("activation", Json("tanh")), name()),
      recurrent_activation_(config().value("recurrent_activation", Json("sigmoid")), name()) {
  KCPP_CHECK(units_ > 0, ValueError, "Received an invalid value for argument `units` of layer '", name(),
             "', expected a positive integer, got ", units_, ".");
}

void RnnCell::do_build(const std::vector<Shape>& in) {
  KCPP_CHECK(!in.empty() && !in[0].empty() && in[0].back() > 0, ValueError, "Layer '", name(),
             "' needs a known feature dimension. Received: input_shape=", in.empty() ? "()" : shape_str(in[0]));
  kernel_ = add_weight("kernel", {in[0].back(), gates_ * units_});
  recurrent_kernel_ = add_weight("recurrent_kernel", {units_, gates_ * units_});
  if (use_bias_) bias_ = add_weight("bias", bias_shape());
}

Tensor RnnCell::project(const Tensor& x) const {
  Tensor xp = ops::matmul(x, kernel_->value());
  return use_bias_ ? ops::bias_add(xp, bias_->value()) : xp;
}

int64_t RnnCell::input_features() const {
  return kernel_ && kernel_->shape().size() == 2 ? kernel_->shape()[0] : -1;
}

bool RnnCell::fast_project(const float* x, float* xp, int64_t rows) const {
  // A GRU's (2, 3 units) bias starts with its input bias, the row its project() adds.
  project_into(x, xp, rows, use_bias_ ? bias_->data<float>() : nullptr);
  return true;
}

// ops::matmul then ops::bias_add, in one kernel that rounds as they do (the product, then + bias).
void RnnCell::project_into(const float* x, float* xp, int64_t rows, const float* bias) const {
  const int64_t n = gates_ * units_, k = kernel_->shape()[0];
  kernels::matmul_bias(x, kernel_->data<float>(), bias, false, xp, rows, n, k);
}

void RnnCell::unit_forget_bias() {
  if (!bias_ || !config_.value("unit_forget_bias", true)) return;
  Tensor b = bias_->value().copy();  // gates i, f, c, o: f's block [units, 2 units) starts at one
  std::fill(b.data<float>() + units_, b.data<float>() + 2 * units_, 1.f);
  bias_->assign(b);
}

Tensor RnnCell::gate(const Tensor& t, int g) const {
  return gates_ == 1 ? t : ops::slice(t, {0, g * units_}, {t.dim(0), units_});
}

Tensor RnnCell::recurrent(const Tensor& h, const Tensor& recurrent_mask) const {
  return ops::matmul(recurrent_mask.defined() ? mul(h, recurrent_mask) : h, recurrent_kernel_->value());
}

std::vector<Shape> RnnCell::compute_output_shape(const std::vector<Shape>& in) const {
  KCPP_CHECK(in.size() == 1 + state_count(), ValueError, "Layer '", name(), "' (", cls_, ") expects the input and ",
             state_count(), " state(s). Received: ", in.size(), " tensors");
  std::vector<Shape> out{state_shape(output_state(), in[0])};
  for (size_t i = 0; i < state_count(); ++i) out.push_back(state_shape(i, in[0]));
  return out;
}

std::vector<Tensor> RnnCell::call(const std::vector<Tensor>& in, const CallContext&) const {
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  compute_output_shape(shapes);
  Shape one_step = in[0].shape();  // (batch, 1, *features): a sequence of one step
  one_step.insert(one_step.begin() + 1, 1);
  Tensor xp = project(in[0].reshape(one_step));
  Shape projected = xp.shape();
  projected.erase(projected.begin() + 1);
  std::vector<Tensor> s = step(xp.reshape(projected), std::vector<Tensor>(in.begin() + 1, in.end()), Tensor());
  s.insert(s.begin(), s[output_state()]);
  return s;
}

std::shared_ptr<RnnCell> make_rnn_cell(const std::string& cell_class, const Json& layer_config, const std::string& name) {
  Json c = Json::object();
  for (const char* k : {"units", "activation", "recurrent_activation", "use_bias", "dropout", "recurrent_dropout",
                        "reset_after", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "dtype",
                        "trainable", "kernel_initializer", "recurrent_initializer", "bias_initializer",
                        "unit_forget_bias", "kernel_constraint", "recurrent_constraint", "bias_constraint"})
    if (layer_config.contains(k)) c[k] = layer_config[k];
  if (cell_class == "SimpleRNNCell") c.erase("recurrent_activation");
  c["name"] = !name.empty() ? name : layer_config.value("name", std::string()) + "/" + to_snake_case(cell_class);
  if (cell_class == "SimpleRNNCell") return std::make_shared<SimpleRnnCell>(std::move(c));
  if (cell_class == "LSTMCell") return std::make_shared<LstmCell>(std::move(c));
  KCPP_ASSERT(cell_class == "GRUCell");
  return std::make_shared<GruCell>(std::move(c));
}

namespace {

class StackedRnnCells : public RnnCell {
 public:
  StackedRnnCells(std::vector<std::shared_ptr<RnnCell>> cells, const std::string& name)
      : RnnCell(Json{{"name", name}, {"units", cells.back()->units()}}, "StackedRNNCells", 1), cells_(std::move(cells)) {}
  size_t state_count() const override {
    size_t n = 0;
    for (const auto& c : cells_) n += c->state_count();
    return n;
  }
  int64_t state_units(size_t i) const override {
    for (const auto& c : cells_) {
      if (i < c->state_count()) return c->units();
      i -= c->state_count();
    }
    KCPP_ASSERT(false);
    return 0;
  }
  size_t output_state() const override { return state_count() - cells_.back()->state_count(); }
  bool inner_dropout() const override {
    for (const auto& c : cells_)
      if (c->dropout() > 0.f || c->recurrent_dropout() > 0.f) return true;
    return false;
  }
  std::vector<Layer*> sublayers() const override {
    std::vector<Layer*> out;
    for (const auto& c : cells_) out.push_back(c.get());
    return out;
  }
  // Keras 3 saves them as the list "cells" (".../rnn/cell/cells/lstm_cell/vars").
  std::vector<SaveableChildren> saveable_children() const override {
    SaveableChildren list{"cells", {}, true};
    for (const auto& c : cells_) list.layers.push_back(c.get());
    return {list};
  }
  // Each cell projects its own input within the step: the stack's "projection" is the input itself.
  bool fast_project(const float*, float*, int64_t) const override { return false; }
  Tensor project(const Tensor& x) const override { return x; }
  std::vector<Tensor> step(const Tensor& x, const std::vector<Tensor>& states, const Tensor&) const override {
    std::vector<Tensor> next;
    Tensor in = x;
    size_t first = 0;
    for (const auto& c : cells_) {
      const Tensor xp = c->project(in.reshape({in.dim(0), 1, in.dim(1)})).reshape({in.dim(0), -1});
      std::vector<Tensor> s = c->step(xp, std::vector<Tensor>(states.begin() + first, states.begin() + first + c->state_count()), Tensor());
      first += c->state_count();
      in = s[0];
      next.insert(next.end(), s.begin(), s.end());
    }
    return next;  // the output, the last cell's first state, is next[output_state()]
  }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    KCPP_CHECK(in.size() == 1 + state_count(), ValueError, "Layer '", name(), "' (StackedRNNCells) expects the input "
               "and ", state_count(), " state(s). Received: ", in.size(), " tensors");
    std::vector<Shape> out = {{in[0][0], units()}};
    for (size_t i = 0; i < state_count(); ++i) out.push_back({in[0][0], state_units(i)});
    return out;
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    Shape shape = in[0];
    for (const auto& c : cells_) {
      c->build({shape});
      shape = {shape[0], c->units()};
    }
  }

 private:
  std::vector<std::shared_ptr<RnnCell>> cells_;
};

}  // namespace

std::shared_ptr<RnnCell> make_stacked_rnn_cells(const Json& cells, const std::string& name) {
  KCPP_CHECK(cells.is_array() && !cells.empty(), ValueError, "Layer '", name, "' (StackedRNNCells) needs a list of "
             "cells. Received: cells=", cells.dump().substr(0, 200));
  std::vector<std::shared_ptr<RnnCell>> made;
  std::map<std::string, int> used;  // cells without a name are numbered as Keras numbers them
  for (const Json& spec : cells) {
    KCPP_CHECK(spec.is_object() && spec.value("class_name", Json()).is_string() && spec.value("config", Json()).is_object(),
               ValueError, "Layer '", name, "' (StackedRNNCells): each cell must be a serialized cell. Received: ",
               spec.dump().substr(0, 200));
    const std::string cls = spec["class_name"].get<std::string>();
    KCPP_CHECK(cls == "SimpleRNNCell" || cls == "LSTMCell" || cls == "GRUCell", NotImplementedError, "Layer '", name,
               "' (StackedRNNCells) holds a ", cls, " cell; kerascpp runs SimpleRNNCell, LSTMCell and GRUCell");
    std::string cell_name = spec["config"].value("name", std::string());
    if (cell_name.empty()) {
      cell_name = to_snake_case(cls);
      const int n = used[cell_name]++;
      if (n > 0) cell_name += "_" + std::to_string(n);
    }
    made.push_back(make_rnn_cell(cls, spec["config"], name + "/" + cell_name));
  }
  return std::make_shared<StackedRnnCells>(std::move(made), name);
}

}  // namespace kerascpp::layers
