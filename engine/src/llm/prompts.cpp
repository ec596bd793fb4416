#include "llm/prompts.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "util/error.h"

namespace kopt::llm {

Prompt prompt(const std::string& role) {
  std::string text;
  std::string origin = "the embedded prompts";
  if (const char* dir = std::getenv("KERNELOPT_PROMPTS"); dir && *dir) {
    std::filesystem::path p = std::filesystem::path(dir) / (role + ".md");
    std::ifstream in(p);
    if (!in) throw UserError(fmt::format("{}: missing; $KERNELOPT_PROMPTS must hold every role's template", p.string()));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str(), origin = p.string();
  } else {
    auto it = embedded_prompts().find(role);
    KOPT_INTERNAL_ASSERT(it != embedded_prompts().end(), "no embedded prompt for role " + role);
    text = it->second;
  }
  static const std::regex head(R"(^# kernelopt (\w+) prompt (v\d+)\s*\n)");
  std::smatch m;
  if (!std::regex_search(text, m, head) || m[1] != role)
    throw UserError(fmt::format("{}: the {} template must start with \"# kernelopt {} prompt vN\"", origin, role, role));
  return {role, role + "/" + m[2].str(), text};
}

std::string render(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  size_t pos = 0;
  for (size_t open; (open = text.find("{{", pos)) != std::string::npos;) {
    size_t close = text.find("}}", open);
    KOPT_INTERNAL_ASSERT(close != std::string::npos, "unclosed {{ in a prompt template");
    std::string name = text.substr(open + 2, close - open - 2);
    auto it = vars.find(name);
    KOPT_INTERNAL_ASSERT(it != vars.end(), "prompt placeholder {{" + name + "}} has no value");
    out += text.substr(pos, open - pos) + it->second;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

}  // namespace kopt::llm
