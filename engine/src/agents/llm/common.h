// What the five LLM agents share: the facts of a kernel written for a prompt
// (source, IR facts, launches, profile and roofline numbers) and the strict
// parsing of replies. A reply that is not exactly what was asked for — prose
// without a code block, several blocks, an unclosed (truncated) block, several
// kernels, malformed JSON — is a failed proposal with its reason, never a
// crash and never a guess at what was meant.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/agent.h"

namespace kopt::agents::llm_support {

// The kernel's facts for a prompt: name, kind, family, ATen ops, signature with dtypes,
// launches (shapes, strides, dtypes, values), bytes/FLOPs, floor, time, bottleneck, and the
// original source.
std::string kernel_facts(const KernelProfile& k);

// The entry's parameter list as the kernel must keep it ("in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr").
std::string params(const KernelProfile& k);

// A parse result: the value, or why there is none.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string reason;
};

// The one fenced code block of `reply` (any language tag). Fails on none ("prose without
// code"), several, or an unclosed fence ("truncated").
Parsed<std::string> one_code_block(const std::string& reply);

// From a code block, the entry function `entry` as a `def` with its body: decorators and
// imports above it are dropped (the candidate keeps the original's), anything after it is
// kept for the static gate to judge. Fails on several @triton.jit functions ("several
// kernels"), on a missing `def entry(`, or when the block is not code.
Parsed<std::string> entry_function(const std::string& code, const std::string& entry);

// The one JSON object of `reply`: a fenced block, or the whole reply when it is bare JSON.
Parsed<nlohmann::json> one_json_object(const std::string& reply);

// The kernel source with the reply's entry function in place of the original's (keeping
// imports and the heuristics decorator, so the launch site is unchanged).
Parsed<std::string> candidate_source(const KernelProfile& k, const std::string& reply);

}  // namespace kopt::agents::llm_support
