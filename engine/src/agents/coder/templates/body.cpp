#include "agents/coder/templates/body.h"

#include <cctype>
#include <regex>

namespace kopt::agents::templates {

namespace {

// "f(\n    a,\n    b,\n)" -> "f(a, b)".
std::string one_line(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    char next = i + 1 < text.size() ? text[i + 1] : ')';
    if (next == ')' || next == ']') {
      while (!out.empty() && (out.back() == ',' || out.back() == ' ')) out.pop_back();
    } else if (!out.empty() && out.back() != '(' && out.back() != '[') {
      out += ' ';
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> straight_line_body(const ir::Kernel& k, std::string* why_not, bool join) {
  ir::KernelSource ks = ir::parse_kernel_source(k.source, k.name, k.name);
  std::vector<std::string> out;
  for (const py::Node* st : ks.entry->list("body")) {
    if (!st->is("Assign") && !st->is("AnnAssign") && !st->is("Expr")) {
      if (why_not) *why_not = "the kernel body has control flow";
      return std::nullopt;
    }
    std::string text = k.source.substr(st->begin.offset, st->end.offset - st->begin.offset);
    if (join) text = one_line(text);
    if (text.find('\n') != std::string::npos) {
      if (why_not) *why_not = "a statement of the kernel body spans lines";
      return std::nullopt;
    }
    out.push_back(text);
  }
  return out;
}

std::vector<LogicalLine> logical_lines(const std::string& body) {
  std::vector<LogicalLine> out;
  int depth = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    std::string raw = body.substr(pos, end - pos);
    pos = end + 1;
    size_t first = raw.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    std::string text = raw.substr(first);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    if (depth > 0) {
      std::string& back = out.back().text;
      if (text.front() == ')' || text.front() == ']' || text.front() == '}') {
        while (!back.empty() && (back.back() == ',' || back.back() == ' ')) back.pop_back();  // "a, )" -> "a)"
      } else if (back.back() != '(' && back.back() != '[' && back.back() != '{') {
        back += ' ';
      }
      back += text;
    } else {
      out.push_back({static_cast<int>(first), text});
    }
    char quote = 0;
    for (char c : text) {
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        --depth;
      } else if (c == '#') {
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> split_top(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    depth += (s[i] == '(' || s[i] == '[' || s[i] == '{') - (s[i] == ')' || s[i] == ']' || s[i] == '}');
    if (depth == 0 && s.compare(i, sep.size(), sep) == 0) {
      out.push_back(s.substr(from, i - from));
      from = i + sep.size();
      i = from - 1;
    }
  }
  out.push_back(s.substr(from));
  return out;
}

std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> out = split_top(s, ",");
  for (std::string& a : out) {
    a.erase(0, a.find_first_not_of(' '));
    a.erase(a.find_last_not_of(' ') + 1);
  }
  return out;
}

std::set<std::string> assigned_names(const std::string& stmt) {
  static const std::regex lhs(R"(^\s*([A-Za-z_][\w, ]*?)\s*(?::[^=]*)?=[^=])");
  std::smatch m;
  std::set<std::string> out;
  if (!std::regex_search(stmt, m, lhs)) return out;
  static const std::regex word(R"([A-Za-z_]\w*)");
  std::string names = m[1];
  for (std::sregex_iterator it(names.begin(), names.end(), word), end; it != end; ++it) out.insert(it->str());
  return out;
}

std::string rename_words(const std::string& text, const std::set<std::string>& names, const std::string& suffix) {
  std::map<std::string, std::string> to;
  for (const std::string& n : names) to[n] = n + suffix;
  return substitute_words(text, to);
}

namespace {

// Walks one statement's text: `word(name)` for each identifier that names a variable, `other(piece)`
// for everything else as written — attributes (tl.float32 is no variable), string literals whole,
// every other character.
template <class Word, class Other>
void scan_words(const std::string& text, const Word& word, const Other& other) {
  for (size_t i = 0; i < text.size();) {
    if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      const bool attribute = i > 0 && text[i - 1] == '.';
      attribute ? other(text.substr(i, j - i)) : word(text.substr(i, j - i));
      i = j;
    } else if (text[i] == '\'' || text[i] == '"') {
      char q = text[i];
      size_t j = text.find(q, i + 1);
      j = j == std::string::npos ? text.size() : j + 1;
      other(text.substr(i, j - i));
      i = j;
    } else {
      other(std::string(1, text[i++]));
    }
  }
}

}  // namespace

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  scan_words(text, [&](const std::string& w) { out.push_back(w); }, [](const std::string&) {});
  return out;
}

std::string substitute_words(const std::string& text, const std::map<std::string, std::string>& to) {
  std::string out;
  scan_words(
      text,
      [&](const std::string& w) {
        auto it = to.find(w);
        out += it == to.end() ? w : it->second;
      },
      [&](const std::string& piece) { out += piece; });
  return out;
}

}  // namespace kopt::agents::templates
