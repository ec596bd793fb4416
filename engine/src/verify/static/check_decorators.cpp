// Check 4, decorators: decorators run on the host when the module is imported, so
// only the two Inductor itself uses are allowed. The entry: `@triton.jit` innermost,
// optionally below one `@triton_heuristics.<kind>(...)` (the original's autotuning
// decorator, kept or replaced by another known kind, e.g. fixed_config to pin a
// config). Helpers: `@triton.jit` only. What the decorators' arguments may contain is
// checked by host_code.
#include <fmt/format.h>

#include <set>

#include "verify/static/static_util.h"

namespace kopt::verify {

namespace {

// torch/_inductor/runtime/triton_heuristics.py, the same list as the IR's.
const std::set<std::string, std::less<>> kKinds = {
    "pointwise", "reduction", "persistent_reduction", "template", "split_scan", "foreach",
    "user_autotune", "fixed_config", "cooperative_reduction", "combo_kernel"};

constexpr std::string_view kHeuristics = "torch._inductor.runtime.triton_heuristics.";

}  // namespace

Finding check_decorators(const StaticInput& in) {
  const py::Node* module = in.candidate.module->root();
  const ImportMap imports = import_map(module);
  Problems p;
  for (const py::Node* st : module->list("body")) {
    if (!st->is("FunctionDef")) continue;
    const bool entry = st->ident("name") == in.original.entry;
    const auto& decs = st->list("decorator_list");
    int heuristics = 0;
    for (size_t i = 0; i < decs.size(); ++i) {
      const py::Node* d = decs[i];
      const bool innermost = i + 1 == decs.size();
      std::string q = qualified_name(d->is("Call") ? d->child("func") : d, imports);
      if (q == "triton.jit") {
        if (!innermost) p.add(d, "@triton.jit must be the innermost (last) decorator");
        continue;
      }
      if (q.starts_with(kHeuristics) && kKinds.count(std::string_view(q).substr(kHeuristics.size()))) {
        if (!entry)
          p.add(d, fmt::format("@{}: only the entry `{}` may carry a heuristics decorator",
                               ir::dotted_name(d->child("func") ? d->child("func") : d), in.original.entry));
        else if (!d->is("Call"))
          p.add(d, "the heuristics decorator must be called with its metadata: @triton_heuristics.<kind>(...)");
        else if (++heuristics > 1)
          p.add(d, "more than one heuristics decorator on the entry");
        if (innermost) p.add(d, "@triton.jit must be the innermost (last) decorator");
        continue;
      }
      std::string shown = ir::dotted_name(d->is("Call") ? d->child("func") : d);
      p.add(d, fmt::format("decorator `{}` is not allowed: use @triton.jit, and on the entry optionally one "
                           "@triton_heuristics.<pointwise|reduction|persistent_reduction|template|split_scan|"
                           "foreach|user_autotune|fixed_config|cooperative_reduction|combo_kernel>(...)",
                           shown.empty() ? in.candidate.module->text(d) : shown));
    }
  }
  return p.finding("decorators", "only @triton.jit and one @triton_heuristics.<kind>(...) on the entry");
}

}  // namespace kopt::verify
