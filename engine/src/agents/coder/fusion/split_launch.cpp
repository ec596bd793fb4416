#include "agents/coder/fusion/split_launch.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/fusion/pair.h"
#include "artifact/pin_config.h"

namespace kopt::agents::fusion {

std::optional<std::vector<templates::LogicalLine>> entry_body(const ir::Kernel& k, std::string* why) {
  size_t def = k.source.find("\ndef " + k.entry + "(");
  if (def == std::string::npos) return *why = "no def line", std::nullopt;
  size_t body_at = k.source.find('\n', def + 1);
  if (body_at == std::string::npos) return *why = "no body", std::nullopt;
  return templates::logical_lines(k.source.substr(body_at + 1));
}

std::string indented(const templates::LogicalLine& l) { return std::string(l.indent, ' ') + l.text + "\n"; }

bool all_true(const std::vector<templates::LogicalLine>& lines, const std::string& mask) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const templates::LogicalLine& l) { return l.text.rfind(mask + " = tl.full(", 0) == 0; });
}

Walk walk(const std::vector<templates::LogicalLine>& loop) {
  static const std::regex access(R"(tl\.(load|store)\(\w+ \+ \(([^)]*)\))"), strided(R"(\d+\*r0_\d+)"),
      unit(R"((^|[ +(])r0_\d+($|[ +)]))");
  bool along = false, across = false;
  for (const templates::LogicalLine& l : loop)
    for (std::sregex_iterator it(l.text.begin(), l.text.end(), access), end; it != end; ++it) {
      std::string index = (*it)[2];
      if (std::regex_search(index, unit)) along = true;
      else if (std::regex_search(index, strided)) across = true;
    }
  return along && across ? Walk::both : across ? Walk::across : Walk::along;
}

std::optional<SplitLaunch> read_split_launch(const ir::Artifact& a, const ir::Function& f, size_t li,
                                             const std::vector<std::string>& sizes, std::string* why,
                                             const std::string& kind) {
  auto no = [&](std::string w) -> std::optional<SplitLaunch> { return *why = std::move(w), std::nullopt; };
  SplitLaunch s;
  s.launch = &f.launches.at(li);
  s.kernel = &a.kernels.at(s.launch->kernel);
  const ir::Kernel& k = *s.kernel;
  if (k.kind != kind) return no(kind == "reduction" ? "not a looped kernel" : fmt::format("not a {} kernel", kind));
  if (!k.mutated_args.empty()) return no("it writes an argument in place");
  std::vector<const ir::KernelParam*> runtime;
  for (const ir::KernelParam& p : k.signature)
    if (p.is_constexpr) s.constexprs.push_back(p.name);
    else runtime.push_back(&p);
  if (runtime.size() <= sizes.size()) return no("no pointer parameter");
  const size_t pointers = runtime.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i)
    if (runtime[pointers + i]->name != sizes[i])
      return no(fmt::format("its parameters do not end with {}", fmt::join(sizes, ", ")));
  s.sizes = sizes;
  for (size_t i = 0; i < pointers; ++i) {
    std::string arg = arg_of(*s.launch, runtime[i]->name);
    if (arg.empty()) return no("a pointer argument not passed by name");
    s.ptr_args.push_back(arg);
    s.params.push_back({runtime[i]->name, runtime[i]->dtype, divisible(k, runtime[i]->name)});
  }
  std::smatch m;
  static const std::regex mpc(R"(multi_processor_count=(\d+))");
  if (std::regex_search(k.source, m, mpc)) s.sms = std::max<int64_t>(1, std::stoll(m[1]));
  s.alloc = f.allocs.empty() ? "empty_strided_cuda" : f.allocs.front().device;
  s.scratch = fmt::format("buf_seg{}", li);
  for (int i = 0; a.module->source().find(s.scratch) != std::string::npos; ++i)
    s.scratch = fmt::format("buf_seg{}_{}", li, i);
  return s;
}

std::optional<stitch::NewLaunch> split_kernel(const SplitLaunch& s, const std::string& suffix, const std::string& body,
                                              const std::vector<DeclParam>& params,
                                              const std::vector<std::string>& mutated, const nlohmann::json& config,
                                              const std::string& args, std::string* why) {
  const ir::Kernel& k = *s.kernel;
  size_t def = k.source.find("\ndef " + k.entry + "(");
  std::string prefix = k.source.substr(0, k.source.find('\n', def + 1) + 1);
  std::string name = k.name + suffix;
  auto declared = redeclare(prefix + body, k.name, k.entry, name, params, mutated, why);
  if (!declared) return std::nullopt;
  try {
    std::string source = ir::pin_config(*declared, name, config);
    ir::parse_kernel_source(source, name, name);
    return stitch::NewLaunch{name, source, args};
  } catch (const std::exception& ex) {
    *why = std::string("the split kernel does not parse: ") + ex.what();
    return std::nullopt;
  }
}

}  // namespace kopt::agents::fusion
