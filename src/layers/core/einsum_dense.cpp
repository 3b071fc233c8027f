#include "layers/core/einsum_dense.h"

#include <algorithm>
#include <regex>

#include "layers/config_utils.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {

EinsumDense::EinsumDense(const Json& c)
    : Layer(c),
      equation_(require<std::string>(c, "equation")),
      output_shape_(c.value("output_shape", Json())),
      activation_(c.value("activation", Json("linear")), name()) {
  if (c.contains("bias_axes") && c["bias_axes"].is_string()) bias_axes_ = c["bias_axes"].get<std::string>();
  KCPP_CHECK(output_shape_.is_number_integer() || output_shape_.is_array(), ValueError, "Layer '", name(),
             "' (EinsumDense) needs an output_shape (an int or a list). Received: ", output_shape_.dump());
  letters(0);  // validates the equation
}

EinsumDense::Letters EinsumDense::letters(int rank) const {
  static const std::regex plain("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)");
  static const std::regex left("\\.\\.\\.([a-zA-Z]+),([a-zA-Z]+)->\\.\\.\\.([a-zA-Z]+)");
  static const std::regex right("([a-zA-Z]{2,})\\.\\.\\.,([a-zA-Z]+)->([a-zA-Z]+)\\.\\.\\.");
  std::smatch m;
  Letters l;
  const bool is_plain = std::regex_match(equation_, m, plain);
  l.left = !is_plain && std::regex_match(equation_, m, left);
  KCPP_CHECK(is_plain || l.left || std::regex_match(equation_, m, right), ValueError, "Invalid einsum equation '",
             equation_, "' of layer '", name(), "' (EinsumDense). Equations must be in the form [X],[Y]->[Z], "
             "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....");
  l.in = m[1], l.kernel = m[2], l.out = m[3];
  if (is_plain || rank == 0) return l;
  l.elided = rank - static_cast<int>(l.in.size());
  KCPP_CHECK(l.elided >= 0, ValueError, "Layer '", name(), "' (EinsumDense): equation '", equation_,
             "' needs an input of rank >= ", l.in.size(), ". Received rank ", rank);
  // Spell the ellipsis with upper-case letters no part uses.
  std::string extra;
  for (char c = 'A'; static_cast<int>(extra.size()) < l.elided && c <= 'Z'; ++c)
    if ((l.in + l.kernel + l.out).find(c) == std::string::npos) extra += c;
  KCPP_CHECK(static_cast<int>(extra.size()) == l.elided, NotImplementedError, "Layer '", name(),
             "' (EinsumDense): too many axes under the ellipsis of '", equation_, "'");
  l.in = l.left ? extra + l.in : l.in + extra;
  l.out = l.left ? extra + l.out : l.out + extra;
  return l;
}

// keras's _analyze_split_string: the batch dimension, then output_shape, elided axes copied from the
// input (after the batch on the left, at the end on the right).
Shape EinsumDense::output_shape_for(const Shape& in) const {
  const Letters l = letters(static_cast<int>(in.size()));
  Shape given;
  if (output_shape_.is_number_integer()) {
    given.push_back(output_shape_.get<int64_t>());
  } else {
    for (const Json& d : output_shape_) given.push_back(d.is_null() ? -1 : d.get<int64_t>());
  }
  Shape out = {in.empty() ? -1 : in[0]};
  if (l.left)
    for (int i = 1; i < l.elided; ++i) out.push_back(in[i]);
  out.insert(out.end(), given.begin(), given.end());
  if (!l.left)
    for (int i = static_cast<int>(in.size()) - l.elided; i < static_cast<int>(in.size()) && l.elided > 0; ++i)
      out.push_back(in[i]);
  KCPP_CHECK(out.size() == l.out.size(), ValueError, "Layer '", name(), "' (EinsumDense): output_shape ",
             output_shape_.dump(), " does not fit equation '", equation_, "' for an input of shape ", shape_str(in));
  // Output axes shared with the input take its size.
  for (size_t i = 0; i < l.out.size(); ++i) {
    const size_t j = l.in.find(l.out[i]);
    if (j == std::string::npos) continue;
    KCPP_CHECK(out[i] < 0 || in[j] < 0 || out[i] == in[j], ValueError, "Layer '", name(), "' (EinsumDense): input "
               "shape and output shape do not match at shared dimension '", l.out[i], "'. Input shape is ", in[j],
               ", and output shape is ", out[i], ".");
    out[i] = in[j];
  }
  return out;
}

std::vector<Shape> EinsumDense::compute_output_shape(const std::vector<Shape>& in) const {
  expect_inputs(in, 1);
  return {output_shape_for(in[0])};
}

void EinsumDense::do_build(const std::vector<Shape>& in) {
  expect_inputs(in, 1);
  const Letters l = letters(static_cast<int>(in[0].size()));
  KCPP_CHECK(l.in.size() == in[0].size(), ValueError, "Layer '", name(), "' (EinsumDense): equation '", equation_,
             "' expects an input of rank ", l.in.size(), ". Received: shape=", shape_str(in[0]));
  const Shape out = output_shape_for(in[0]);
  Shape kernel;
  for (char c : l.kernel) {
    const size_t o = l.out.find(c), i = l.in.find(c);
    KCPP_CHECK(o != std::string::npos || i != std::string::npos, ValueError, "Weight dimension '", c,
               "' of layer '", name(), "' (EinsumDense) did not have a match in either the input spec '", l.in,
               "' or the output spec '", l.out, "'.");
    kernel.push_back(o != std::string::npos ? out[o] : in[0][i]);
    KCPP_CHECK(kernel.back() > 0, ValueError, "Layer '", name(), "' (EinsumDense) needs a known size for kernel "
               "axis '", c, "'. Received: input shape ", shape_str(in[0]));
  }
  kernel_ = add_weight("kernel", kernel);
  built_equation_ = l.in + "," + l.kernel + "->" + l.out;
  built_rank_ = static_cast<int>(in[0].size());
  if (bias_axes_.empty()) return;
  size_t first = l.out.size();
  for (char c : bias_axes_) {
    const size_t o = l.out.find(c);
    KCPP_CHECK(o != std::string::npos, ValueError, "Bias dimension '", c, "' of layer '", name(),
               "' (EinsumDense) was requested, but is not part of the output spec '", l.out, "'");
    first = std::min(first, o);
  }
  // Keras's bias: from the first bias axis to the end of the output (elided axes included), 1 where
  // it does not vary; it broadcasts against the output.
  for (size_t i = first; i < l.out.size(); ++i)
    bias_shape_.push_back(bias_axes_.find(l.out[i]) != std::string::npos ? out[i] : 1);
  bias_ = add_weight("bias", bias_shape_);
}

Tensor EinsumDense::apply(const Tensor& x) const {
  KCPP_CHECK(x.rank() == built_rank_, ValueError, "Layer '", name(), "' (EinsumDense): equation '", equation_,
             "' was built for inputs of rank ", built_rank_, ". Received: shape=", shape_str(x.shape()));
  Tensor y = ops::einsum(built_equation_, x, kernel_->value());
  if (bias_) y = ops::binary(ops::BinaryOp::add, y, bias_->value());
  return activation_(y);
}

std::vector<Tensor> EinsumDense::call(const std::vector<Tensor>& in, const CallContext&) const {
  return {apply(in[0])};
}

LayerPtr make_einsum_dense(Json c) { return std::make_shared<EinsumDense>(std::move(c)); }

}  // namespace kerascpp::layers
