// Linear algebra op nodes, products and diagonals: keras.ops einsum (any operands, ellipsis, repeated
// letters, the implicit form) / dot / tensordot / inner / outer / vdot / kron / cross / trace /
// diagonal / diag / diagflat / vander / cdist, and tf.einsum / tf.tensordot / tf.linalg's trace,
// diag, diag_part, band_part, cross, matrix_transpose. Matrix functions (det, solve, norm...) are in
// linalg_ops_solve.cpp.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
// Shared with linalg_ops_solve.cpp (defined there).
namespace linalg {
Tensor moveaxis(const Tensor& x, int from, int to);
Tensor moveaxes(const Tensor& x, const std::vector<int>& from, const std::vector<int>& to);
Tensor swap_last(const Tensor& x);                  // (..., m, n) -> (..., n, m)
Tensor power(const Tensor& x, const Tensor& p);     // x ** p, numpy broadcasting, differentiable
std::vector<OpDef> solve_ops();
}  // namespace linalg
namespace {
using ops::BinaryOp;
using linalg::moveaxes;
using linalg::moveaxis;
using linalg::power;
using linalg::swap_last;

// ---- einsum. An equation with its ellipses expanded: one char per dim of each operand (the dims an
// ellipsis covers are chars '0'.., right-aligned across operands, broadcast where 1) and the output's.
struct Equation {
  std::vector<std::string> in;
  std::string out;
  std::map<char, int64_t> size;  // -1: unknown
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Keras 3's TF backend renames the letters in order of first appearance (a, b, ...) before
// tf.einsum; the implicit output's alphabetical order follows the new names.
std::string keras_letters(const std::string& s) {
  static const std::string kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::map<char, char> m;
  std::string out;
  for (char c : s) {
    if (is_letter(c) && !m.count(c)) m[c] = kLetters[m.size()];
    out += is_letter(c) ? m[c] : c;
  }
  return out;
}

template <class T>
Equation parse_einsum(const Args<T>& a, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char c : a.template get<std::string>("subscripts", "")) if (c != ' ') eq += c;
  if (a.keras3()) eq = keras_letters(eq);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> parts;
  for (size_t p = 0;;) {
    const size_t comma = lhs.find(',', p);
    parts.push_back(lhs.substr(p, comma == std::string::npos ? std::string::npos : comma - p));
    if (comma == std::string::npos) break;
    p = comma + 1;
  }
  if (parts.size() != shapes.size())
    a.fail("subscripts", "an equation of " + std::to_string(shapes.size()) + " operands");
  Equation e;
  size_t ell = 0;  // dims under the ellipsis, most over operands
  std::vector<size_t> ell_of(parts.size(), 0);
  for (size_t k = 0; k < parts.size(); ++k) {
    const std::string& p = parts[k];
    const size_t dots = p.find("...");
    size_t letters = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] == '.') continue;
      if (!is_letter(p[i])) a.fail("subscripts", "an einsum equation (letters, ',', '...' and '->')");
      ++letters;
    }
    if (dots == std::string::npos ? letters != shapes[k].size() : letters > shapes[k].size())
      a.fail("subscripts", "an equation whose operand " + std::to_string(k) + " has " + std::to_string(shapes[k].size()) + " dims");
    ell_of[k] = dots == std::string::npos ? 0 : shapes[k].size() - letters;
    ell = std::max(ell, ell_of[k]);
  }
  auto expand = [&](const std::string& p, size_t n) {
    std::string s;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p.compare(i, 3, "...") == 0) {
        for (size_t d = ell - n; d < ell; ++d) s += static_cast<char>('0' + d);
        i += 2;
      } else {
        s += p[i];
      }
    }
    return s;
  };
  for (size_t k = 0; k < parts.size(); ++k) {
    e.in.push_back(expand(parts[k], ell_of[k]));
    for (size_t d = 0; d < e.in[k].size(); ++d) {
      const char c = e.in[k][d];
      const int64_t n = shapes[k][d];
      int64_t& s = e.size.try_emplace(c, 1).first->second;
      const bool ellipsis = c >= '0' && c <= '9';
      if (n < 0) {
        if (s == 1) s = -1;
      } else if (s == 1 || s == -1 || (ellipsis && n == 1)) {
        if (n != 1 || s == -1) s = s == -1 && n == 1 ? -1 : n;
      } else if (s != n) {
        a.fail("subscripts", "an equation the operands' shapes fit (dimension '" + std::string(1, c) + "' is " +
                                 std::to_string(s) + " and " + std::to_string(n) + ")");
      }
    }
  }
  if (arrow != std::string::npos) {
    e.out = expand(eq.substr(arrow + 2), ell);
  } else {  // implicit: the letters seen once, in alphabetical order (tf.einsum puts no ellipsis there)
    if (ell > 0) a.fail("subscripts", "an implicit equation without an ellipsis (tf.einsum requires '->...')");
    std::map<char, int> count;
    for (const std::string& s : e.in)
      for (char c : s) ++count[c];
    std::string once;
    for (const auto& [c, n] : count)
      if (n == 1 && is_letter(c)) once += c;
    if (a.keras3())  // string.ascii_letters order: lower case first
      std::stable_sort(once.begin(), once.end(), [](char x, char y) { return (x >= 'a') > (y >= 'a'); });
    e.out += once;
  }
  for (size_t i = 0; i < e.out.size(); ++i)
    if (!e.size.count(e.out[i]) || e.out.find(e.out[i]) != i)
      a.fail("subscripts", "an equation whose output letters are distinct and in some operand");
  return e;
}

Shape einsum_shape_of(const Equation& e) {
  Shape out;
  for (char c : e.out) out.push_back(e.size.at(c));
  return out;
}

// The general einsum as one loop over every letter's values (repeated letters: diagonals; size-1
// ellipsis dims: broadcast), with its backward the same loop per operand.
struct Loop {
  std::vector<int64_t> sizes;                 // per letter
  std::vector<std::vector<int64_t>> strides;  // per operand, then the output last: per letter
  int64_t total = 1;
};
Loop loop_of(const Equation& e, const std::vector<Tensor>& xs) {
  Loop l;
  std::vector<char> letters;
  for (const auto& [c, n] : e.size) {
    letters.push_back(c);
    l.sizes.push_back(n);
    l.total *= n;
  }
  auto strides = [&](const std::string& spec, const Shape& shape) {
    std::vector<int64_t> s(letters.size(), 0);
    int64_t st = 1;
    for (int d = static_cast<int>(spec.size()) - 1; d >= 0; --d) {
      const size_t li = std::find(letters.begin(), letters.end(), spec[d]) - letters.begin();
      if (shape[d] != 1 || l.sizes[li] == 1) s[li] += st;
      st *= shape[d];
    }
    return s;
  };
  for (size_t k = 0; k < xs.size(); ++k) l.strides.push_back(strides(e.in[k], xs[k].shape()));
  l.strides.push_back(strides(e.out, einsum_shape_of(e)));
  return l;
}
// f(offsets) at every point of the loop; offsets[k] into operand k, the output's last.
template <typename F>
void each_point(const Loop& l, F f) {
  const size_t n = l.strides.size(), m = l.sizes.size();
  std::vector<int64_t> off(n, 0), idx(m, 0);
  for (int64_t t = 0; t < l.total; ++t) {
    f(off);
    for (int j = static_cast<int>(m) - 1; j >= 0; --j) {
      for (size_t k = 0; k < n; ++k) off[k] += l.strides[k][j];
      if (++idx[j] < l.sizes[j]) break;
      for (size_t k = 0; k < n; ++k) off[k] -= l.strides[k][j] * l.sizes[j];
      idx[j] = 0;
    }
  }
}
Tensor einsum_loop(const Equation& e, const std::vector<Tensor>& xs) {
  const Loop l = loop_of(e, xs);
  const size_t n = xs.size();
  Tensor y = Tensor::zeros(einsum_shape_of(e));
  float* py = y.data<float>();
  each_point(l, [&](const std::vector<int64_t>& off) {
    float p = 1.f;
    for (size_t k = 0; k < n; ++k) p *= xs[k].data<float>()[off[k]];
    py[off[n]] += p;
  });
  if (ops::Recorder* r = ops::tape_for(xs))
    r->record("einsum", xs, y, [xs, l, n](const Tensor& dy) {
      ops::Grads g;
      for (size_t k = 0; k < n; ++k) {
        Tensor d = Tensor::zeros(xs[k].shape());
        each_point(l, [&](const std::vector<int64_t>& off) {
          float p = dy.data<float>()[off[n]];
          for (size_t j = 0; j < n; ++j)
            if (j != k) p *= xs[j].data<float>()[off[j]];
          d.data<float>()[off[k]] += p;
        });
        g.push_back(d);
      }
      return g;
    });
  return y;
}

// Distinct letters per operand and no broadcasting: contracted pairwise by ops::einsum (matrix
// products); otherwise the loop.
Tensor einsum_of(const Equation& e, std::vector<Tensor> xs) {
  bool simple = true;
  for (size_t k = 0; k < xs.size(); ++k)
    for (size_t d = 0; d < e.in[k].size(); ++d)
      simple = simple && e.in[k].find(e.in[k][d]) == d && xs[k].dim(static_cast<int>(d)) == e.size.at(e.in[k][d]);
  if (!simple || xs.size() < 2) return einsum_loop(e, xs);
  std::map<char, char> name;  // ops::einsum takes letters only
  for (const auto& [c, n] : e.size) name[c] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[name.size()];
  auto named = [&](const std::string& s) {
    std::string o;
    for (char c : s) o += name.at(c);
    return o;
  };
  Tensor cur = xs[0];
  std::string spec = e.in[0];
  for (size_t k = 1; k < xs.size(); ++k) {
    std::string keep;
    if (k + 1 == xs.size()) {
      keep = e.out;
    } else {
      for (char c : spec + e.in[k]) {
        bool needed = e.out.find(c) != std::string::npos;
        for (size_t j = k + 1; j < xs.size(); ++j) needed = needed || e.in[j].find(c) != std::string::npos;
        if (needed && keep.find(c) == std::string::npos) keep += c;
      }
    }
    cur = ops::einsum(named(spec) + "," + named(e.in[k]) + "->" + named(keep), cur, xs[k]);
    spec = keep;
  }
  return cur;
}

std::vector<Shape> operand_shapes(const Args<Shape>& a, const char* const* names, size_t n) {
  std::vector<Shape> s;
  for (size_t i = 0; i < n && a.has(names[i]); ++i) s.push_back(a.value(names[i]));
  return s;
}
const char* const kOperands[] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"};
Shape einsum_shape(const Args<Shape>& a) { return einsum_shape_of(parse_einsum(a, operand_shapes(a, kOperands, 8))); }
Tensor einsum(const Args<Tensor>& a) {
  std::vector<Tensor> xs;
  std::vector<Shape> shapes;
  for (const char* n : kOperands)
    if (a.has(n)) {
      xs.push_back(a.value(n));
      shapes.push_back(xs.back().shape());
    }
  return einsum_of(parse_einsum(a, shapes), xs);
}

// ---- tensordot and the products made of it: x's free dims, then y's.
std::string letters_for(int n, int from) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[from + i];
  return s;
}
Tensor contract(const Tensor& x, const Tensor& y, std::vector<int> ax, std::vector<int> ay, const std::string& who) {
  KCPP_CHECK(x.rank() + y.rank() <= 52 && ax.size() == ay.size(), ValueError, who, ": invalid axes");
  std::string sx = letters_for(x.rank(), 0), sy = letters_for(y.rank(), x.rank());
  for (size_t i = 0; i < ax.size(); ++i) {
    const int i1 = ax[i] < 0 ? ax[i] + x.rank() : ax[i], i2 = ay[i] < 0 ? ay[i] + y.rank() : ay[i];
    KCPP_CHECK(i1 >= 0 && i1 < x.rank() && i2 >= 0 && i2 < y.rank(), ValueError, who, ": axes out of bounds");
    KCPP_CHECK(x.dim(i1) == y.dim(i2), ValueError, who, ": contracted dims differ: ", shape_str(x.shape()), " and ",
               shape_str(y.shape()));
    sy[i2] = sx[i1];
  }
  std::string out;
  for (char c : sx) if (sy.find(c) == std::string::npos) out += c;
  for (char c : sy) if (sx.find(c) == std::string::npos) out += c;
  return ops::einsum(sx + "," + sy + "->" + out, x, y);
}
// Tensordot's axes: an int n (x's last n with y's first n) or a pair of lists (or ints).
template <class T>
std::pair<std::vector<int>, std::vector<int>> tensordot_axes(const Args<T>& a, int rx) {
  const Json& j = a.json("axes");
  if (j.is_null() || j.is_number_integer()) {
    const int n = j.is_null() ? 2 : j.get<int>();
    if (n < 0 || n > rx) a.fail("axes", "an int in [0, rank of x]");
    std::vector<int> x(n), y(n);
    std::iota(x.begin(), x.end(), rx - n);
    std::iota(y.begin(), y.end(), 0);
    return {x, y};
  }
  if (!j.is_array() || j.size() != 2) a.fail("axes", "an int or a pair of axis lists");
  auto list = [&](const Json& e) {
    if (e.is_number_integer()) return std::vector<int>{e.get<int>()};
    if (!e.is_array()) a.fail("axes", "an int or a pair of axis lists");
    return e.get<std::vector<int>>();
  };
  return {list(j[0]), list(j[1])};
}
Shape contract_shape(const Args<Shape>& a, const Shape& x, const Shape& y, std::vector<int> ax, std::vector<int> ay) {
  if (ax.size() != ay.size()) a.fail("axes", "two lists of one length");
  std::vector<bool> cx(x.size()), cy(y.size());
  for (size_t i = 0; i < ax.size(); ++i) {
    const int r1 = static_cast<int>(x.size()), r2 = static_cast<int>(y.size());
    if (ax[i] < -r1 || ax[i] >= r1 || ay[i] < -r2 || ay[i] >= r2) a.fail("axes", "axes of the operands");
    cx[(ax[i] + r1) % r1] = cy[(ay[i] + r2) % r2] = true;
  }
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) if (!cx[d]) out.push_back(x[d]);
  for (size_t d = 0; d < y.size(); ++d) if (!cy[d]) out.push_back(y[d]);
  return out;
}
Shape tensordot_shape(const Args<Shape>& a) {
  const Shape x = a.value("x1"), y = a.value("x2");
  const auto [ax, ay] = tensordot_axes(a, static_cast<int>(x.size()));
  return contract_shape(a, x, y, ax, ay);
}
Tensor tensordot(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  const auto [ax, ay] = tensordot_axes(a, x.rank());
  return contract(x, y, ax, ay, a.who());
}
Tensor times(const Tensor& x, const Tensor& y) { return ops::binary(BinaryOp::multiply, x, y); }
// dot: a scalar multiplies; y of rank 1 contracts with x's last dim; else x's last with y's second last.
Shape dot_shape(const Args<Shape>& a) {
  const Shape x = a.value("x1"), y = a.value("x2");
  if (x.empty() || y.empty()) return ops::broadcast_shape(x, y);
  return contract_shape(a, x, y, {-1}, {y.size() == 1 ? -1 : -2});
}
Tensor dot(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  if (x.rank() == 0 || y.rank() == 0) return times(x, y);
  return contract(x, y, {-1}, {y.rank() == 1 ? -1 : -2}, a.who());
}
Shape inner_shape(const Args<Shape>& a) {
  const Shape x = a.value("x1"), y = a.value("x2");
  if (x.empty() || y.empty()) return ops::broadcast_shape(x, y);
  return contract_shape(a, x, y, {-1}, {-1});
}
Tensor inner(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  if (x.rank() == 0 || y.rank() == 0) return times(x, y);
  return contract(x, y, {-1}, {-1}, a.who());
}
int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n = n < 0 || d < 0 ? -1 : n * d;
  return n;
}
Shape outer_shape(const Args<Shape>& a) { return {count(a.value("x1")), count(a.value("x2"))}; }
Tensor outer(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  return times(x.reshape({x.size(), 1}), y.reshape({y.size()}));
}
Shape vdot_shape(const Args<Shape>&) { return {}; }
Tensor vdot(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  KCPP_CHECK(x.size() == y.size(), ValueError, a.who(), ": the operands have ", x.size(), " and ", y.size(), " elements");
  return ops::einsum("a,a->", x.reshape({x.size()}), y.reshape({y.size()}));
}
// kron: both brought to one rank (leading 1s); out dim d = x[d] * y[d].
Shape kron_shape(const Args<Shape>& a) {
  Shape x = a.value("x1"), y = a.value("x2");
  while (x.size() < y.size()) x.insert(x.begin(), 1);
  while (y.size() < x.size()) y.insert(y.begin(), 1);
  for (size_t d = 0; d < x.size(); ++d) x[d] = x[d] < 0 || y[d] < 0 ? -1 : x[d] * y[d];
  return x;
}
Tensor kron(const Args<Tensor>& a) {
  Tensor x = a.value("x1"), y = a.value("x2");
  Shape sx = x.shape(), sy = y.shape();
  while (sx.size() < sy.size()) sx.insert(sx.begin(), 1);
  while (sy.size() < sx.size()) sy.insert(sy.begin(), 1);
  Shape px, py, out;
  for (size_t d = 0; d < sx.size(); ++d) {
    px.insert(px.end(), {sx[d], 1});
    py.insert(py.end(), {1, sy[d]});
    out.push_back(sx[d] * sy[d]);
  }
  return times(x.reshape(px), y.reshape(py)).reshape(out);
}

// ---- cross product along one axis (2-vectors padded with a zero third component).
Tensor cross3(const Tensor& x, const Tensor& y) {  // both (..., 3), one shape
  Tensor c = Tensor::empty(x.shape());
  auto kernel = [](const float* u, const float* v, float* w, int64_t n) {
    for (int64_t i = 0; i < n; i += 3) {
      w[i] = u[i + 1] * v[i + 2] - u[i + 2] * v[i + 1];
      w[i + 1] = u[i + 2] * v[i] - u[i] * v[i + 2];
      w[i + 2] = u[i] * v[i + 1] - u[i + 1] * v[i];
    }
  };
  kernel(x.data<float>(), y.data<float>(), c.data<float>(), c.size());
  if (ops::Recorder* r = ops::tape_for({&x, &y}))
    r->record("cross", {x, y}, c, [x, y, kernel](const Tensor& dc) {  // dx = y x dc, dy = dc x x
      Tensor dx = Tensor::empty(x.shape()), dy = Tensor::empty(y.shape());
      kernel(y.data<float>(), dc.data<float>(), dx.data<float>(), dx.size());
      kernel(dc.data<float>(), x.data<float>(), dy.data<float>(), dy.size());
      return ops::Grads{dx, dy};
    });
  return c;
}
template <class T>
std::pair<int, int> cross_axes(const Args<T>& a, const char* name, int rank) {
  const int ax = a.has("axis") ? a.template get<int>("axis", -1) : a.template get<int>(name, -1);
  if (ax < -rank || ax >= rank) a.fail(a.has("axis") ? "axis" : name, "an axis of the operand's " + std::to_string(rank) + " dims");
  return {ax < 0 ? ax + rank : ax, rank};
}
Shape cross_shape(const Args<Shape>& a) {
  Shape x = a.value("x1"), y = a.value("x2");
  const int ia = cross_axes(a, "axisa", static_cast<int>(x.size())).first, ib = cross_axes(a, "axisb", static_cast<int>(y.size())).first;
  const int64_t nx = x[ia], ny = y[ib];
  if ((nx != 2 && nx != 3) || (ny != 2 && ny != 3)) a.fail("x1", "of 2- or 3-vectors along the axis, with x2");
  x.erase(x.begin() + ia);
  y.erase(y.begin() + ib);
  Shape out = ops::broadcast_shape(x, y);
  if (nx == 2 && ny == 2) return out;
  const int ic = cross_axes(a, "axisc", static_cast<int>(out.size()) + 1).first;
  out.insert(out.begin() + ic, 3);
  return out;
}
Tensor cross(const Args<Tensor>& a) {
  Tensor x = moveaxis(a.value("x1"), cross_axes(a, "axisa", a.value("x1").rank()).first, -1);
  Tensor y = moveaxis(a.value("x2"), cross_axes(a, "axisb", a.value("x2").rank()).first, -1);
  const bool planar = x.dim(-1) == 2 && y.dim(-1) == 2;
  for (Tensor* t : {&x, &y}) {
    if (t->dim(-1) != 2 && t->dim(-1) != 3) a.fail("x1", "of 2- or 3-vectors along the axis, with x2");
    if (t->dim(-1) == 2) {
      std::vector<std::pair<int64_t, int64_t>> pads(t->rank(), {0, 0});
      pads.back() = {0, 1};
      *t = ops::pad(*t, pads);
    }
  }
  const Shape shape = ops::broadcast_shape(x.shape(), y.shape());
  const Tensor zero = Tensor::zeros(shape);
  if (x.shape() != shape) x = ops::binary(BinaryOp::add, x, zero);
  if (y.shape() != shape) y = ops::binary(BinaryOp::add, y, zero);
  const Tensor c = cross3(x, y);
  if (planar) {
    ops::Index all, z;
    all.kind = ops::Index::ellipsis;
    z.kind = ops::Index::integer;
    z.at = 2;
    return ops::get_item(c, {all, z});
  }
  return moveaxis(c, -1, cross_axes(a, "axisc", c.rank()).first);
}

// ---- diagonals. diag_part: (..., m, n) -> (..., len) the diagonal k (k > 0 above); set_diag its
// inverse into zeros: (..., len) -> (..., m, n). Each the other's backward.
int64_t diag_len(int64_t m, int64_t n, int64_t k) { return std::max<int64_t>(0, k >= 0 ? std::min(m, n - k) : std::min(m + k, n)); }
Tensor set_diag(const Tensor& d, int64_t m, int64_t n, int64_t k);
Tensor diag_part(const Tensor& x, int64_t k) {
  const int64_t m = x.dim(-2), n = x.dim(-1), len = diag_len(m, n, k), b = x.size() / std::max<int64_t>(m * n, 1);
  Shape s(x.shape().begin(), x.shape().end() - 2);
  s.push_back(len);
  Tensor y = Tensor::empty(s);
  const int64_t r0 = k >= 0 ? 0 : -k, c0 = k >= 0 ? k : 0;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < len; ++j) y.data<float>()[i * len + j] = x.data<float>()[i * m * n + (r0 + j) * n + c0 + j];
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("diag_part", {x}, y, [m, n, k](const Tensor& dy) { return ops::Grads{set_diag(dy, m, n, k)}; });
  return y;
}
Tensor set_diag(const Tensor& d, int64_t m, int64_t n, int64_t k) {
  const int64_t len = d.dim(-1), b = d.size() / std::max<int64_t>(len, 1);
  KCPP_CHECK(len == diag_len(m, n, k), ValueError, "diag: a diagonal of ", len, " values does not fit ", m, "x", n, " at k=", k);
  Shape s(d.shape().begin(), d.shape().end() - 1);
  s.insert(s.end(), {m, n});
  Tensor y = Tensor::zeros(s);
  const int64_t r0 = k >= 0 ? 0 : -k, c0 = k >= 0 ? k : 0;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < len; ++j) y.data<float>()[i * m * n + (r0 + j) * n + c0 + j] = d.data<float>()[i * len + j];
  if (ops::Recorder* r = ops::tape_for({&d}))
    r->record("set_diag", {d}, y, [k](const Tensor& dy) { return ops::Grads{diag_part(dy, k)}; });
  return y;
}

// numpy.diagonal / trace: axis1 and axis2 moved last. Keras 3's defaults 0 and 1.
template <class T>
std::pair<int, int> axis_pair(const Args<T>& a, int rank) {
  int a1 = a.template get<int>("axis1", 0), a2 = a.template get<int>("axis2", 1);
  if (a1 < -rank || a1 >= rank) a.fail("axis1", "an axis of the input's " + std::to_string(rank) + " dims");
  if (a2 < -rank || a2 >= rank) a.fail("axis2", "an axis of the input's " + std::to_string(rank) + " dims");
  a1 = a1 < 0 ? a1 + rank : a1;
  a2 = a2 < 0 ? a2 + rank : a2;
  if (a1 == a2) a.fail("axis2", "an axis other than axis1");
  return {a1, a2};
}
Shape diagonal_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_rank(a, x, 2, "x");
  const auto [a1, a2] = axis_pair(a, static_cast<int>(x.size()));
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) if (static_cast<int>(d) != a1 && static_cast<int>(d) != a2) out.push_back(x[d]);
  out.push_back(x[a1] < 0 || x[a2] < 0 ? -1 : diag_len(x[a1], x[a2], a.get("offset", 0)));
  return out;
}
Tensor diagonal(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const auto [a1, a2] = axis_pair(a, x.rank());
  return diag_part(moveaxes(x, {a1, a2}, {-2, -1}), a.get("offset", 0));
}
Shape trace_shape(const Args<Shape>& a) {
  Shape s = diagonal_shape(a);
  s.pop_back();
  return s;
}
Tensor trace(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const auto [a1, a2] = axis_pair(a, x.rank());
  const Tensor d = diag_part(moveaxes(x, {a1, a2}, {-2, -1}), a.get("offset", 0));
  return ops::detail::sum_axes(d, {d.rank() - 1}).reshape(Shape(d.shape().begin(), d.shape().end() - 1));
}
// numpy.diag: a vector's matrix, a matrix's diagonal k; diagflat: the flattened input's matrix.
Shape diag_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  const int64_t k = a.get("k", 0);
  if (x.size() == 1) return {x[0] < 0 ? -1 : x[0] + std::abs(k), x[0] < 0 ? -1 : x[0] + std::abs(k)};
  if (x.size() != 2) a.fail("x", "of rank 1 or 2");
  return {x[0] < 0 || x[1] < 0 ? -1 : diag_len(x[0], x[1], k)};
}
Tensor diag(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int64_t k = a.get("k", 0);
  if (x.rank() == 1) return set_diag(x, x.dim(0) + std::abs(k), x.dim(0) + std::abs(k), k);
  if (x.rank() != 2) a.fail("x", "of rank 1 or 2");
  return diag_part(x, k);
}
Shape diagflat_shape(const Args<Shape>& a) {
  const int64_t n = count(a.value("x")), k = std::abs(a.get("k", 0));
  return {n < 0 ? -1 : n + k, n < 0 ? -1 : n + k};
}
Tensor diagflat(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int64_t k = a.get("k", 0), n = x.size() + std::abs(k);
  return set_diag(x.reshape({x.size()}), n, n, k);
}
// tf.linalg.diag(diagonal, k, num_rows, num_cols, padding_value) with one k, and diag_part.
void tf_diag_args(const Args<Shape>& a) {
  if (!a.json("k").is_null() && !a.json("k").is_number_integer()) a.fail("k", "one int (kerascpp takes one diagonal)");
  if (a.get("padding_value", 0.f) != 0.f) a.fail("padding_value", "supported by kerascpp other than 0");
}
Shape tf_diag_shape(const Args<Shape>& a) {
  tf_diag_args(a);
  Shape x = a.value("x");
  expect_rank(a, x, 1, "diagonal");
  const int64_t k = a.get("k", 0), n = x.back() < 0 ? -1 : x.back() + std::abs(k);
  const int64_t rows = a.get<int64_t>("num_rows", -1), cols = a.get<int64_t>("num_cols", -1);
  if ((rows != -1 && rows != n) || (cols != -1 && cols != n)) a.fail("num_rows", "the diagonal's own size (kerascpp)");
  x.back() = n;
  x.push_back(n);
  return x;
}
Tensor tf_diag(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int64_t k = a.get("k", 0);
  return set_diag(x, x.dim(-1) + std::abs(k), x.dim(-1) + std::abs(k), k);
}
Shape tf_diag_part_shape(const Args<Shape>& a) {
  tf_diag_args(a);
  Shape x = a.value("x");
  expect_rank(a, x, 2, "input");
  const int64_t m = x[x.size() - 2], n = x.back();
  x.pop_back();
  x.back() = m < 0 || n < 0 ? -1 : diag_len(m, n, a.get("k", 0));
  return x;
}
Tensor tf_diag_part(const Args<Tensor>& a) { return diag_part(a.value("x"), a.get("k", 0)); }
Shape tf_trace_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  expect_rank(a, x, 2, "x");
  x.resize(x.size() - 2);
  return x;
}
Tensor tf_trace(const Args<Tensor>& a) {
  const Tensor d = diag_part(a.value("x"), 0);
  return ops::detail::sum_axes(d, {d.rank() - 1}).reshape(Shape(d.shape().begin(), d.shape().end() - 1));
}
// tf.linalg.band_part(input, num_lower, num_upper): entries within the band kept (negative: all).
Tensor band_part(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int64_t lo = a.get<int64_t>("num_lower", -1), up = a.get<int64_t>("num_upper", -1), m = x.dim(-2), n = x.dim(-1);
  Tensor mask = Tensor::empty({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) mask.data<float>()[i * n + j] = (lo < 0 || i - j <= lo) && (up < 0 || j - i <= up) ? 1.f : 0.f;
  return ops::where(ops::detail::broadcast_to(mask, x.shape()), x, ops::detail::filled(x.shape(), 0.f));  // inf outside: 0
}
Shape matrix_transpose_shape(const Args<Shape>& a) {
  if (a.get("conjugate", false)) a.fail("conjugate", "supported by kerascpp (real tensors)");
  Shape x = a.value("x");
  expect_rank(a, x, 2, "a");
  std::swap(x[x.size() - 1], x[x.size() - 2]);
  return x;
}
Tensor matrix_transpose(const Args<Tensor>& a) { return swap_last(a.value("x")); }

// ---- vander(x, N, increasing): x (n,) -> (n, N), x ** powers (x ** 0 = 1).
Shape vander_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (x.size() != 1) a.fail("x", "of rank 1");
  return {x[0], a.has("N") ? a.get<int64_t>("N", 0) : x[0]};
}
Tensor vander(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() != 1) a.fail("x", "of rank 1");
  const int64_t n = a.has("N") ? a.get<int64_t>("N", 0) : x.dim(0);
  if (n < 0) a.fail("N", "a size >= 0");
  std::vector<float> p(n);
  for (int64_t j = 0; j < n; ++j) p[j] = static_cast<float>(a.get("increasing", false) ? j : n - 1 - j);
  return power(x.reshape({x.dim(0), 1}), Tensor::from_vector({n}, p));
}

// ---- cdist(x, y): (..., n, d), (..., m, d) -> (..., n, m) Euclidean distances.
Shape cdist_shape(const Args<Shape>& a) {
  const Shape x = a.value("x"), y = a.value("y");
  if (x.size() < 2 || y.size() < 2) a.fail("x", "of rank >= 2 with y of rank >= 2");
  Shape out = ops::broadcast_shape(Shape(x.begin(), x.end() - 2), Shape(y.begin(), y.end() - 2));
  out.insert(out.end(), {x[x.size() - 2], y[y.size() - 2]});
  return out;
}
Tensor cdist(const Args<Tensor>& a) {
  const Tensor x = a.value("x"), y = a.value("y");
  Shape sx = x.shape(), sy = y.shape();
  sx.insert(sx.end() - 1, 1);
  sy.insert(sy.end() - 2, 1);
  const Tensor d = ops::binary(BinaryOp::subtract, x.reshape(sx), y.reshape(sy));
  const Tensor s = ops::detail::sum_axes(ops::unary(ops::UnaryOp::square, d), {d.rank() - 1});
  return ops::unary(ops::UnaryOp::sqrt, s.reshape(Shape(s.shape().begin(), s.shape().end() - 1)));
}

}  // namespace


std::vector<OpDef> linalg_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.numpy.Einsum", nullptr, {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "subscripts"}, {}, einsum_shape, einsum},
      OpDef{nullptr, "einsum|linalg.einsum", {"subscripts", "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"}, {{"equation", "subscripts"}},
            einsum_shape, einsum},
      OpDef{"ops.numpy.Tensordot", "tensordot|linalg.tensordot", {"x1", "x2", "axes"}, {{"a", "x1"}, {"b", "x2"}}, tensordot_shape,
            tensordot},
      OpDef{"ops.numpy.Dot", nullptr, {"x1", "x2"}, {}, dot_shape, dot},
      OpDef{"ops.numpy.Inner", nullptr, {"x1", "x2"}, {}, inner_shape, inner},
      OpDef{"ops.numpy.Outer", nullptr, {"x1", "x2"}, {}, outer_shape, outer},
      OpDef{"ops.numpy.Vdot", nullptr, {"x1", "x2"}, {}, vdot_shape, vdot},
      OpDef{"ops.numpy.Kron", nullptr, {"x1", "x2"}, {}, kron_shape, kron},
      OpDef{"ops.numpy.Cross", "linalg.cross", {"x1", "x2", "axisa", "axisb", "axisc", "axis"}, {{"a", "x1"}, {"b", "x2"}},
            cross_shape, cross},
      OpDef{"ops.numpy.Trace", nullptr, {"x", "offset", "axis1", "axis2"}, {}, trace_shape, trace},
      OpDef{"ops.numpy.Diagonal", nullptr, {"x", "offset", "axis1", "axis2"}, {}, diagonal_shape, diagonal},
      OpDef{"ops.numpy.Diag", nullptr, {"x", "k"}, {}, diag_shape, diag},
      OpDef{"ops.numpy.Diagflat", nullptr, {"x", "k"}, {}, diagflat_shape, diagflat},
      OpDef{"ops.numpy.Vander", nullptr, {"x", "N", "increasing"}, {}, vander_shape, vander},
      OpDef{"ops.math.CDist", nullptr, {"x", "y"}, {}, cdist_shape, cdist},
      OpDef{nullptr, "linalg.trace|trace", {"x"}, {}, tf_trace_shape, tf_trace},
      OpDef{nullptr, "linalg.diag", {"x", "k", "num_rows", "num_cols", "padding_value", "align"},
            {{"diagonal", "x"}}, tf_diag_shape, tf_diag},
      OpDef{nullptr, "linalg.diag_part", {"x", "k", "padding_value", "align"}, {{"input", "x"}}, tf_diag_part_shape, tf_diag_part},
      OpDef{nullptr, "linalg.band_part", {"x", "num_lower", "num_upper"}, {{"input", "x"}}, same_shape, band_part},
      OpDef{nullptr, "linalg.matrix_transpose|linalg.adjoint|linalg.transpose", {"x", "conjugate"}, {{"a", "x"}, {"matrix", "x"}},
            matrix_transpose_shape, matrix_transpose},
  };
  for (OpDef& d : linalg::solve_ops()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
