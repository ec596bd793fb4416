#include "agents/coder/rewrites/x_index.h"

#include <iterator>
#include <regex>

namespace kopt::agents::rewrites::detail {

size_t count_words(const std::string& text, const std::string& word) {
  std::regex w("\\b" + word + "\\b");
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), w), std::sregex_iterator()));
}

std::optional<UntiledPointwise> untiled_pointwise(const ir::Kernel& k, const std::string& what, std::string* why) {
  if (k.kind != "pointwise") {
    say(why, what + ": not a pointwise kernel");
    return std::nullopt;
  }
  auto ks = parse(k.source, k.name, why);
  if (!ks) return std::nullopt;
  UntiledPointwise u{std::move(*ks), nullptr, ""};
  u.entry = u.ks.entry;
  u.body = text_of(k.source, u.entry);
  if (count_words(u.body, "yindex") || count_words(u.body, "YBLOCK")) {
    say(why, what + ": the kernel is tiled already");
    return std::nullopt;
  }
  return u;
}

std::optional<Digit> digit_of(const std::string& text, const py::Node* stmt, int64_t n) {
  static const std::regex plain(R"(^(\w+) = xindex$)"), mod(R"(^(\w+) = \(?xindex % (\d+)\)?$)"),
      div_mod(R"(^(\w+) = \(?\(xindex // (\d+)\) % (\d+)\)?$)"), div(R"(^(\w+) = \(?xindex // (\d+)\)?$)");
  std::smatch m;
  if (std::regex_match(text, m, plain)) return Digit{stmt, m[1], 1, n};
  if (std::regex_match(text, m, mod)) return Digit{stmt, m[1], 1, std::stoll(m[2])};
  if (std::regex_match(text, m, div_mod))
    return Digit{stmt, m[1], std::stoll(m[2]), std::stoll(m[2]) * std::stoll(m[3])};
  if (std::regex_match(text, m, div)) return Digit{stmt, m[1], std::stoll(m[2]), n};
  return std::nullopt;
}

std::optional<XIndex> x_index(const std::string& source, const py::Node* entry, const std::string& what,
                              std::string* why) {
  auto no = [&](const std::string& reason) {
    say(why, what + ": " + reason);
    return std::optional<XIndex>{};
  };
  std::string body = text_of(source, entry);
  // Program order must not matter: no atomics, no second grid axis (a split scan's lookback
  // reads earlier programs' results).
  if (body.find("atomic") != std::string::npos) return no("the kernel uses atomics");
  static const std::regex pid(R"(tl\.program_id\((\d)\))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), pid); it != std::sregex_iterator(); ++it)
    if ((*it)[1] != "0") return no("the kernel has more than one grid axis");
  static const std::regex numel(R"(^xnumel = (\d+)$)"), offset(R"(^xoffset = tl\.program_id\(0\) \* XBLOCK$)"),
      index(R"(^xindex = xoffset \+ tl\.arange\(0, XBLOCK\)(\[[^\]]*\])?$)"), masked(R"(^xmask = xindex < xnumel$)"),
      unmasked(R"(^xmask = tl\.full\(\[XBLOCK\], True, tl\.int1\)(\[[^\]]*\])?$)");
  XIndex x;
  bool has_offset = false;
  for (const py::Node* s : entry->list("body")) {
    std::string t = text_of(source, s);
    std::smatch m;
    if (std::regex_match(t, m, numel)) x.numel = std::stoll(m[1]);
    else if (std::regex_match(t, offset)) has_offset = true;
    else if (std::regex_match(t, m, index)) x.index_stmt = s, x.suffix = m[1];
    else if (std::regex_match(t, masked)) x.mask_stmt = s;
    else if (std::regex_match(t, m, unmasked)) x.mask_stmt = s, x.mask_is_full = true, x.mask_suffix = m[1];
    else x.others.push_back(s);
  }
  if (x.numel <= 1 || x.numel >= (int64_t{1} << 31)) return no("xnumel is not a constant below 2^31 in the kernel");
  if (!has_offset || !x.index_stmt || !x.mask_stmt) return no("the x index is not Inductor's `xoffset + tl.arange` form");
  return x;
}

std::optional<XIndex> x_index_1d(const std::string& source, const py::Node* entry, const std::string& what,
                                 std::string* why) {
  auto x = x_index(source, entry, what, why);
  if (!x) return std::nullopt;
  auto one_d = [](const std::string& s) { return s.empty() || s == "[:]"; };
  if (!one_d(x->suffix) || (x->mask_is_full && !one_d(x->mask_suffix))) {
    say(why, what + ": the x index is not Inductor's 1-D `xoffset + tl.arange` form");
    return std::nullopt;
  }
  return x;
}

std::string indent_from(const std::string& text, size_t from, size_t def_col) {
  std::string out = text.substr(0, from);
  size_t pos = from;
  bool body = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(pos, end - pos);
    size_t lead = line.find_first_not_of(' ');
    bool blank = lead == std::string::npos || line[lead] == '\n';
    if (!blank && lead <= def_col) body = false;
    out += (body && !blank ? "    " : "") + line;
    pos = end;
  }
  return out;
}

}  // namespace kopt::agents::rewrites::detail
