#include "artifact/index_map.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace kopt::ir {

Affine plus(Affine a, const Affine& b, int64_t factor) {
  for (const auto& [n, v] : b.coef)
    if ((a.coef[n] += factor * v) == 0) a.coef.erase(n);
  a.c += factor * b.c;
  return a;
}

namespace {

Affine scaled(Affine a, int64_t f) {
  if (f == 0) return {};
  for (auto& [n, v] : a.coef) v *= f;
  a.c *= f;
  return a;
}

std::optional<int64_t> int_const(const py::Node* e) {
  if (e && e->is("Constant") && e->const_kind == py::ConstKind::Int) return std::stoll(e->value);
  return std::nullopt;
}

// `v // p` and `v % p` (p > 0) as affine maps, as affine(e, bound, range) states.
std::optional<std::pair<Affine, Affine>> divided(const Affine& v, int64_t p,
                                                  const std::map<std::string, int64_t>& range) {
  Affine high, low;
  int64_t lo = v.c, hi = v.c;
  for (const auto& [n, k] : v.coef) {
    if (k % p == 0) {
      high.coef[n] = k / p;
      continue;
    }
    auto r = range.find(n);
    if (r == range.end()) return std::nullopt;
    low.coef[n] = k;
    (k < 0 ? lo : hi) += k * (r->second - 1);
  }
  int64_t q = floordiv(lo, p);
  if (hi - q * p >= p) return std::nullopt;
  high.c = q;
  low.c = v.c - q * p;
  return std::make_pair(high, low);
}

// Both affine() forms: `range` null, no division is read.
std::optional<Affine> affine_of(const py::Node* e, const std::map<std::string, Affine>& bound,
                                const std::map<std::string, int64_t>* range) {
  if (!e) return std::nullopt;
  if (auto v = int_const(e)) return Affine{{}, *v};
  if (e->is("Name")) {
    std::string name(e->ident("id"));
    if (auto it = bound.find(name); it != bound.end()) return it->second;
    return Affine{{{name, 1}}, 0};
  }
  if (e->is("UnaryOp") && e->ident("op") == "USub") {
    auto v = affine_of(e->child("operand"), bound, range);
    if (v) return scaled(*v, -1);
    return std::nullopt;
  }
  if (!e->is("BinOp")) return std::nullopt;
  auto l = affine_of(e->child("left"), bound, range), r = affine_of(e->child("right"), bound, range);
  if (!l || !r) return std::nullopt;
  std::string_view op = e->ident("op");
  if (op == "Add") return plus(*l, *r, 1);
  if (op == "Sub") return plus(*l, *r, -1);
  if (op == "Mult" && l->coef.empty()) return scaled(*r, l->c);
  if (op == "Mult" && r->coef.empty()) return scaled(*l, r->c);
  if (range && (op == "FloorDiv" || op == "Mod") && r->coef.empty() && r->c > 0) {
    auto hl = divided(*l, r->c, *range);
    if (!hl) return std::nullopt;
    return op == "FloorDiv" ? hl->first : hl->second;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Affine> affine(const py::Node* e) { return affine_of(e, {}, nullptr); }

std::optional<Affine> affine(const py::Node* e, const std::map<std::string, Affine>& bound,
                             const std::map<std::string, int64_t>& range) {
  return affine_of(e, bound, &range);
}

std::optional<Digit> digit(const std::string& name, const py::Node* v) { return digit(name, v, "xindex"); }

std::optional<Digit> digit(const std::string& name, const py::Node* v, std::string_view index) {
  auto is_xindex = [&](const py::Node* e) { return e && e->is("Name") && e->ident("id") == index; };
  if (!v || !v->is("BinOp")) return std::nullopt;
  std::string_view op = v->ident("op");
  auto k = int_const(v->child("right"));
  if (!k || *k <= 0) return std::nullopt;
  const py::Node* l = v->child("left");
  if (op == "FloorDiv" && is_xindex(l)) return Digit{name, *k, 0};
  if (op != "Mod") return std::nullopt;
  if (is_xindex(l)) return Digit{name, 1, *k};
  if (l && l->is("BinOp") && l->ident("op") == "FloorDiv" && is_xindex(l->child("left")))
    if (auto b = int_const(l->child("right")); b && *b > 0) return Digit{name, *b, *k};
  return std::nullopt;
}

std::optional<AxisDigit> axis_digit(const std::string& name, const py::Node* v) {
  for (const char* index : {"xindex", "yindex", "zindex", "r0_index"}) {
    if (v && v->is("Name") && v->ident("id") == index) return AxisDigit{index, {name, 1, 0}};
    if (auto d = digit(name, v, index)) return AxisDigit{index, *d};
  }
  return std::nullopt;
}

bool complete(std::vector<Digit>& digits, int64_t xnumel, std::string* why) {
  std::sort(digits.begin(), digits.end(), [](const Digit& a, const Digit& b) { return a.base < b.base; });
  int64_t place = 1;
  for (size_t i = 0; i < digits.size(); ++i) {
    Digit& d = digits[i];
    if (d.base != place) {
      *why = fmt::format("the x index's digits do not tile it: {} starts at place {}, expected {}", d.name, d.base,
                         place);
      return false;
    }
    if (d.radix == 0) {
      if (i + 1 != digits.size() || xnumel % d.base != 0) {
        *why = fmt::format("digit {} (xindex // {}) is not the outermost digit of xnumel {}", d.name, d.base, xnumel);
        return false;
      }
      d.radix = xnumel / d.base;
    }
    place *= d.radix;
  }
  if (place != xnumel) {
    *why = fmt::format("the x index's digits span {} elements, xnumel is {}", place, xnumel);
    return false;
  }
  return true;
}

bool is_x_index(const Affine& a, const std::vector<Digit>& digits) {
  if (a.c != 0 || a.coef.size() != digits.size()) return false;
  for (const Digit& d : digits) {
    auto it = a.coef.find(d.name);
    if (it == a.coef.end() || it->second != d.base) return false;
  }
  return true;
}

std::optional<std::vector<std::string>> invert(const Affine& load, const std::vector<Digit>& digits, int64_t numel,
                                               const std::string& addr, std::string* why,
                                               const std::vector<std::pair<int64_t, int64_t>>& layout) {
  auto no = [&](std::string w) -> std::optional<std::vector<std::string>> { return *why = std::move(w), std::nullopt; };
  for (const auto& [n, v] : load.coef)
    if (std::none_of(digits.begin(), digits.end(), [&](const Digit& d) { return d.name == n; }))
      return no(fmt::format("the load index uses {}, which is not a digit of the x index", n));
  // Each digit's place in the load index, smallest first: they must be 1, r0, r0*r1, ... for the
  // radices taken in that order, so the index is a mixed-radix number over a permutation of the digits
  // (or, in a padded buffer, the buffer's strides: each a multiple of the one below, past its span).
  std::vector<size_t> order(digits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto place = [&](size_t i) {
    auto it = load.coef.find(digits[i].name);
    return it == load.coef.end() ? int64_t{0} : it->second;
  };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return std::llabs(place(a)) < std::llabs(place(b)); });
  int64_t expected = 1, low = load.c;
  bool tight = true;
  std::vector<std::pair<int64_t, int64_t>> read;  // (radix, place) of each digit of more than one value
  for (size_t i : order) {
    int64_t p = place(i), q = std::llabs(p);
    if (p == 0 && digits[i].radix > 1)
      return no(fmt::format("the load index does not use digit {}: elements repeat", digits[i].name));
    if (digits[i].radix <= 1) continue;
    // Past the lower digits' span: what padding leaves (Inductor aligns a stride above 1024 elements to 128
    // bytes, so a padded place need not be a multiple of the one below). The buffer's layout decides below.
    bool padded = !layout.empty() && q > expected;
    if (q != expected && !padded)
      return no(fmt::format("digit {} has place {} in the load index, a bijection needs {}", digits[i].name, p,
                            expected));
    tight = tight && q == expected;
    if (p < 0) low -= q * (digits[i].radix - 1);  // a reversed axis: its largest value gives the lowest address
    read.emplace_back(digits[i].radix, q);
    expected = q * digits[i].radix;
  }
  if (tight && expected != numel) return no(fmt::format("the load index spans {} elements of {}", expected, numel));
  if (!tight) {
    std::vector<std::pair<int64_t, int64_t>> held;
    for (const auto& [size, stride] : layout)
      if (size > 1) held.emplace_back(size, stride);
    std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    // Dimensions one after another in memory (a stride equal to the one below times its size) hold the same
    // elements as one: a flip's single digit over a padded buffer's two outer dims walks them both.
    auto merged = [](std::vector<std::pair<int64_t, int64_t>> dims) {
      std::vector<std::pair<int64_t, int64_t>> out;
      for (const auto& [size, stride] : dims)
        if (!out.empty() && out.back().second * out.back().first == stride) out.back().first *= size;
        else out.emplace_back(size, stride);
      return out;
    };
    if (merged(held) != merged(read))
      return no("the load index does not walk the padded buffer's sizes and strides: elements repeat or are skipped");
  }
  if (low != 0) return no(fmt::format("the load index is shifted by {} from [0, {})", low, numel));
  std::vector<std::string> out(digits.size());
  for (size_t i = 0; i < digits.size(); ++i) {
    int64_t p = place(i);
    const Digit& d = digits[i];
    if (d.radix <= 1) {
      out[i] = "0";
      continue;
    }
    int64_t a = std::llabs(p), next = 0;  // the next place up (0: the top digit)
    for (const auto& [r, q] : read)
      if (q > a && (next == 0 || q < next)) next = q;
    std::string v;
    if (!tight) {
      // A padded layout: every place is past the span of the places below it, but need not divide the ones
      // above (an outer stride aligned to 128 bytes over rows of 431). The address modulo each place above,
      // from the top down, leaves this digit's and the lower ones' share; a modulus whose result the next
      // one down divides away is left out. Then this digit's value is that share over its own place.
      std::vector<int64_t> ups;
      for (const auto& [r, q] : read)
        if (q > a) ups.push_back(q);
      std::sort(ups.begin(), ups.end());
      v = addr;
      for (size_t j = ups.size(); j-- > 0;)
        if (j == 0 || ups[j] % ups[j - 1] != 0) v = fmt::format("({} % {})", v, ups[j]);
      if (a != 1) v = fmt::format("({} // {})", v, a);
    } else {  // a mixed-radix number: the address over this digit's place, within its radix
      v = a == 1 ? addr : fmt::format("({} // {})", addr, a);
      if (next != 0 && a * d.radix != numel) v = fmt::format("({} % {})", v, d.radix);
    }
    out[i] = p < 0 ? fmt::format("({} - {})", d.radix - 1, v) : v;
  }
  return out;
}

std::optional<int64_t> eval_int(const py::Node* e, const std::map<std::string, int64_t>& env) {
  if (!e) return std::nullopt;
  if (auto v = int_const(e)) return *v;
  if (e->is("Name")) {
    auto it = env.find(std::string(e->ident("id")));
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  if (e->is("UnaryOp") && e->ident("op") == "USub") {
    auto v = eval_int(e->child("operand"), env);
    if (v) return -*v;
    return std::nullopt;
  }
  if (!e->is("BinOp")) return std::nullopt;
  auto l = eval_int(e->child("left"), env), r = eval_int(e->child("right"), env);
  if (!l || !r) return std::nullopt;
  std::string_view op = e->ident("op");
  if (op == "Add") return *l + *r;
  if (op == "Sub") return *l - *r;
  if (op == "Mult") return *l * *r;
  if (*r == 0) return std::nullopt;
  // Python floors; C++ truncates toward zero.
  int64_t q = *l / *r, m = *l % *r;
  if (m != 0 && ((m < 0) != (*r < 0))) --q, m += *r;
  if (op == "FloorDiv") return q;
  if (op == "Mod") return m;
  return std::nullopt;
}

}  // namespace kopt::ir
