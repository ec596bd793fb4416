#include "agents/coder/fusion/declaration.h"

#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kopt::agents::fusion {

std::optional<std::string> redeclare(const std::string& source, const std::string& old_name, const std::string& entry,
                                     const std::string& name, const std::vector<DeclParam>& params,
                                     const std::vector<std::string>& mutated, std::string* why) {
  std::vector<std::string> decl, sig, div, quoted;
  size_t at = 0;  // a runtime argument's position: configs count constexprs out
  for (const DeclParam& p : params) {
    bool ce = p.type == "constexpr";
    decl.push_back(ce ? p.name + " : tl.constexpr" : p.name);
    sig.push_back(fmt::format("'{}': '{}'", p.name, p.type));
    if (!ce && p.divisible) div.push_back(fmt::format("({},): [['tt.divisibility', 16]]", at));
    at += !ce;
  }
  for (const std::string& m : mutated) quoted.push_back("'" + m + "'");
  const std::regex def("def " + entry + R"(\s*\(([^)]*)\)\s*:)"), signature(R"('signature': \{[^}]*\})"),
      configs(R"('configs': \[\{[^}]*\}\])"), mutated_names(R"('mutated_arg_names': \[[^\]]*\])");
  for (const auto* re : {&def, &signature, &configs, &mutated_names})
    if (!std::regex_search(source, *re)) {
      *why = fmt::format("the declaration of {} is not in Inductor's form", old_name);
      return std::nullopt;
    }
  auto first = std::regex_constants::format_first_only;
  std::string s = std::regex_replace(source, def, fmt::format("def {}({}):", name, fmt::join(decl, ", ")), first);
  s = std::regex_replace(s, signature, fmt::format("'signature': {{{}}}", fmt::join(sig, ", ")), first);
  s = std::regex_replace(s, configs, fmt::format("'configs': [{{{}}}]", fmt::join(div, ", ")), first);
  s = std::regex_replace(s, mutated_names, fmt::format("'mutated_arg_names': [{}]", fmt::join(quoted, ", ")), first);
  return std::regex_replace(s, std::regex("\\b" + old_name + "\\b"), name);
}

}  // namespace kopt::agents::fusion
