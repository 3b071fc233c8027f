// ops::einsum for two operands, as transposes, reshapes and one (batched) matrix product, so that its
// gradient is theirs. Letters only (callers expand an ellipsis): a letter in both operands and the
// output is a batch axis, in both operands only a contracted one, in one operand and the output a
// free one, in one operand only an axis summed first.
#include <algorithm>
#include <string>

#include "ops/checks.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

struct Spec {
  std::string a, b, out;
};

Spec parse(std::string_view eq) {
  const size_t comma = eq.find(','), arrow = eq.find("->");
  KCPP_CHECK(comma != std::string_view::npos && arrow != std::string_view::npos && comma < arrow, ValueError,
             "einsum: expected an equation of the form 'ab,bc->ac'. Received: '", std::string(eq), "'");
  Spec s{std::string(eq.substr(0, comma)), std::string(eq.substr(comma + 1, arrow - comma - 1)),
         std::string(eq.substr(arrow + 2))};
  for (const std::string* part : {&s.a, &s.b, &s.out}) {
    for (size_t i = 0; i < part->size(); ++i)
      KCPP_CHECK(std::isalpha(static_cast<unsigned char>((*part)[i])) && part->find((*part)[i]) == i, ValueError,
                 "einsum: each operand of '", std::string(eq), "' must be distinct letters (no ellipsis, no "
                 "diagonals)");
  }
  for (char c : s.out)
    KCPP_CHECK(s.a.find(c) != std::string::npos || s.b.find(c) != std::string::npos, ValueError, "einsum: output "
               "letter '", c, "' of '", std::string(eq), "' is in neither operand");
  return s;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// Sums x over the letters of `spec` that `keep_a` and `keep_b` both lack; updates spec.
Tensor sum_unused(Tensor x, std::string* spec, const std::string& other, const std::string& out) {
  for (int d = static_cast<int>(spec->size()) - 1; d >= 0; --d) {
    const char c = (*spec)[d];
    if (has(other, c) || has(out, c)) continue;
    x = sum(x, d);
    spec->erase(d, 1);
  }
  return x;
}

// x transposed so that its letters run in `order`, and reshaped to `groups` (each a run of letters).
Tensor arrange(const Tensor& x, const std::string& spec, const std::vector<std::string>& groups) {
  std::vector<int> perm;
  for (const std::string& g : groups)
    for (char c : g) perm.push_back(static_cast<int>(spec.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int>(i);
  Tensor t = identity ? x : transpose(x, perm);
  Shape shape;
  int d = 0;
  for (const std::string& g : groups) {
    int64_t n = 1;
    for (size_t k = 0; k < g.size(); ++k) n *= t.dim(d++);
    shape.push_back(n);
  }
  return t.reshape(shape);
}

}  // namespace

Tensor einsum(std::string_view equation, const Tensor& a, const Tensor& b) {
  detail::check_float32("einsum", a, "a");
  detail::check_float32("einsum", b, "b");
  Spec s = parse(equation);
  KCPP_CHECK(a.rank() == static_cast<int>(s.a.size()) && b.rank() == static_cast<int>(s.b.size()), ValueError,
             "einsum '", std::string(equation), "': operands of rank ", s.a.size(), " and ", s.b.size(),
             " expected. Received: shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()));
  for (size_t i = 0; i < s.a.size(); ++i) {
    const size_t j = s.b.find(s.a[i]);
    KCPP_CHECK(j == std::string::npos || a.dim(static_cast<int>(i)) == b.dim(static_cast<int>(j)), ValueError,
               "einsum '", std::string(equation), "': dimension '", s.a[i], "' is ", a.dim(static_cast<int>(i)),
               " in a and ", b.dim(static_cast<int>(j)), " in b (shapes ", shape_str(a.shape()), ", ",
               shape_str(b.shape()), ")");
  }
  Tensor x = sum_unused(a, &s.a, s.b, s.out), y = sum_unused(b, &s.b, s.a, s.out);
  std::string batch, contract, free_a, free_b;
  for (char c : s.out)
    if (has(s.a, c) && has(s.b, c)) batch += c;
  for (char c : s.a) {
    if (has(s.b, c) && !has(s.out, c)) contract += c;
    if (!has(s.b, c)) free_a += c;
  }
  for (char c : s.b)
    if (!has(s.a, c)) free_b += c;
  Shape out_dims;  // batch, free_a, free_b
  for (char c : batch) out_dims.push_back(x.dim(static_cast<int>(s.a.find(c))));
  for (char c : free_a) out_dims.push_back(x.dim(static_cast<int>(s.a.find(c))));
  for (char c : free_b) out_dims.push_back(y.dim(static_cast<int>(s.b.find(c))));
  Tensor prod;
  if (batch.empty()) {
    prod = matmul(arrange(x, s.a, {free_a, contract}), arrange(y, s.b, {contract, free_b}));
  } else {
    prod = batch_matmul(arrange(x, s.a, {batch, free_a, contract}), arrange(y, s.b, {batch, contract, free_b}));
  }
  prod = prod.reshape(out_dims);
  const std::string have = batch + free_a + free_b;
  std::vector<int> perm;
  bool identity = true;
  for (char c : s.out) {
    perm.push_back(static_cast<int>(have.find(c)));
    identity = identity && perm.back() == static_cast<int>(perm.size()) - 1;
  }
  return identity ? prod : transpose(prod, perm);
}

}  // namespace kerascpp::ops
