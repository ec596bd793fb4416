// A fused kernel's declaration, written from a region kernel's: Inductor compiles and launches a
// kernel by what its heuristics decorator says (triton_meta's signature and per-argument
// divisibility, inductor_meta's kernel name and mutated arguments) and by its def line, so a
// kernel with other parameters than the one it was shaped on needs all of them rewritten together.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kopt::agents::fusion {

struct DeclParam {
  std::string name;
  std::string type;        // Triton's signature type: "*fp32", "i32", or "constexpr"
  bool divisible = false;  // promised 16-byte aligned (pointers) or a multiple of 16 (sizes)
};

// `source` (a kernel in Inductor's form) with the def of `entry` renamed `name` and given `params`
// (constexprs annotated), triton_meta's signature and divisibility configs and inductor_meta's
// mutated argument names made these, and every other mention of `old_name` (the kernel name in
// inductor_meta) made `name`. Nothing, with the reason, when the declaration is not in Inductor's form.
std::optional<std::string> redeclare(const std::string& source, const std::string& old_name, const std::string& entry,
                                     const std::string& name, const std::vector<DeclParam>& params,
                                     const std::vector<std::string>& mutated, std::string* why);

}  // namespace kopt::agents::fusion
