#include "agents/llm/common.h"

#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "agents/coder/templates/templates.h"

namespace kopt::agents::llm_support {

using nlohmann::json;

namespace {

std::string ms(const std::optional<double>& v) { return v ? fmt::format("{:.4f} ms", *v) : "not measured"; }

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

std::string params(const KernelProfile& k) { return templates::entry_params(*k.kernel); }

std::string kernel_facts(const KernelProfile& k) {
  const ir::Kernel& ker = *k.kernel;
  std::string sig;
  for (const ir::KernelParam& p : ker.signature)
    sig += fmt::format("  {}: {}{}\n", p.name, p.dtype, p.constant.is_null() ? "" : " = " + p.constant.dump());
  std::string launches;
  size_t shown = 0;
  for (const json& l : k.launches) {
    if (++shown > 4) {
      launches += fmt::format("  ... {} more launches\n", k.launches.size() - 4);
      break;
    }
    launches += "  " + l.value("args", json::array()).dump() + "\n";
  }
  std::string out = fmt::format(
      "Kernel {} (entry {}), kind {}, family {}\n"
      "ATen ops: {}\n"
      "Parameters (Triton signature):\n{}"
      "Size hints: {}\n"
      "Launches (argument shapes, strides, dtypes, values):\n{}"
      "Must move {} bytes ({} read, {} written) and do {} FLOPs per run\n"
      "Roofline floor: {}; measured time: {}; bottleneck: {}\n",
      ker.name, ker.entry, ker.kind, k.family, fmt::join(ker.aten_ops, ", "), sig, ker.size_hints.dump(),
      launches.empty() ? "  (none recorded)\n" : launches, k.cost.bytes(), k.cost.bytes_read, k.cost.bytes_written,
      k.cost.flops_known ? std::to_string(k.cost.flops) : "unknown", ms(k.floor_ms), ms(k.time_ms), k.bottleneck);
  if (!k.explanation.empty()) out += "Profiler's reading: " + k.explanation + "\n";
  out += "\nThe original kernel source:\n```python\n" + ker.source + "\n```\n";
  return out;
}

Parsed<std::string> one_code_block(const std::string& reply) {
  std::istringstream in(reply);
  std::string line, body;
  int blocks = 0;
  bool inside = false;
  std::string current;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.rfind("```", 0) == 0) {
      if (!inside) {
        inside = true, current.clear();
      } else if (t == "```") {
        inside = false, ++blocks, body = current;
      } else {
        current += line + "\n";  // a fence with a tag inside a block is text of the block
      }
      continue;
    }
    if (inside) current += line + "\n";
  }
  if (inside) return {std::nullopt, "truncated: the code block is never closed"};
  if (blocks == 0) return {std::nullopt, "prose without code: the reply has no fenced code block"};
  if (blocks > 1) return {std::nullopt, fmt::format("{} code blocks where one was asked for", blocks)};
  if (trim(body).empty()) return {std::nullopt, "the code block is empty"};
  return {body, ""};
}

Parsed<std::string> entry_function(const std::string& code, const std::string& entry) {
  static const std::regex jit(R"(^\s*@triton\.jit\b)", std::regex::multiline);
  auto n = std::distance(std::sregex_iterator(code.begin(), code.end(), jit), std::sregex_iterator());
  if (n > 1) return {std::nullopt, fmt::format("several kernels: {} @triton.jit functions where one was asked for", n)};
  std::regex def("^def " + entry + R"(\s*\()", std::regex::multiline);
  std::smatch m;
  if (!std::regex_search(code, m, def))
    return {std::nullopt, fmt::format("the code defines no top-level function {}", entry)};
  return {code.substr(m.position(0)), ""};
}

Parsed<json> one_json_object(const std::string& reply) {
  std::string text = trim(reply);
  if (text.rfind("{", 0) != 0) {
    Parsed<std::string> block = one_code_block(reply);
    if (!block.value) return {std::nullopt, block.reason};
    text = *block.value;
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return {std::nullopt, "the JSON does not parse"};
  if (!j.is_object()) return {std::nullopt, "the JSON is not an object"};
  return {j, ""};
}

Parsed<std::string> candidate_source(const KernelProfile& k, const std::string& reply) {
  Parsed<std::string> block = one_code_block(reply);
  if (!block.value) return block;
  Parsed<std::string> fn = entry_function(*block.value, k.kernel->entry);
  if (!fn.value) return fn;
  try {
    return {templates::replace_entry(*k.kernel, *fn.value), ""};
  } catch (const std::exception& e) {
    return {std::nullopt, std::string("cannot place the function in the kernel: ") + e.what()};
  }
}

}  // namespace kopt::agents::llm_support
