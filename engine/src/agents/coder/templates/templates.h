// The template library of the built-in coder: expert Triton kernels per family,
// instantiated from the kernel's IR (parameter names, shapes, strides, dtypes
// of its real launches). A template only proposes: each instance is an
// ordinary candidate that must pass every gate, so a template applied where its
// assumptions do not hold is rejected, never shipped.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// Families with a template in the library's table (templates.cpp): the coder tries "template:<family>"
// for these.
bool has_template(const std::string& family);

// Instances for `k` from the table's first template that takes its family and kernel kind (several
// launch configs of it), or none when the kernel's shape is outside what that template handles (the
// reason in *why_not).
std::vector<Candidate> instantiate(const KernelProfile& k, std::string* why_not);

// The kernel source with its @triton.jit entry replaced by `entry_def` (a full `def` with its
// body), keeping the imports and the heuristics decorator; helpers of the original are dropped.
std::string replace_entry(const ir::Kernel& k, const std::string& entry_def);

// The entry's parameter list as it must be written again ("in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr"):
// G1 requires a template to keep the original's parameters.
std::string entry_params(const ir::Kernel& k);

// A template's answer when it does not apply: no instances, the reason in *why_not (when asked).
std::vector<Candidate> decline(std::string* why_not, const std::string& why);

// Whether a launch argument (shape/stride JSON) is a dense row-major tensor; size-1 dims may have any stride.
bool is_contiguous(const nlohmann::json& t);

// One template instance: `source` with launch config `config` pinned.
Candidate instance(const ir::Kernel& k, const std::string& family, const std::string& source,
                   const nlohmann::json& config, const std::string& description);

}  // namespace kopt::agents::templates
