// What the fusion strategies (epilogue.h, prologue.h) share: two launches of one region and the
// internal buffer between them, the parameters each binds it to, and reading Triton's loads and
// stores (`tl.load(ptr + (index), mask, ...)`, `tl.store(ptr + (index), value, mask)`).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/ir.h"

namespace kopt::agents::fusion {

struct Pair {
  const ir::Artifact* art = nullptr;
  const ir::Function* f = nullptr;
  size_t producer = 0, consumer = 0;  // launch indices into f->launches
  std::string buffer;                 // the internal storage: written by the producer, read by the consumer
  std::vector<std::string> internal;  // every internal storage of the region (a strategy may fuse several)
  // The sources fused: each kernel's own, or the per-kernel search's winner for it (same name,
  // parameters and launch site), so that a fusion keeps what the kernel's own search won.
  std::string producer_source, consumer_source;
};

// The parameter of launch `l` bound to `name` as a plain name, when exactly one is; else "".
std::string param_bound(const ir::Launch& l, const std::string& name);

// The argument text of launch `l` bound to parameter `param`.
std::string arg_of(const ir::Launch& l, const std::string& param);

// The launch's arguments as written (positional, then keywords), `param`'s replaced by `text`.
std::string args_with(const ir::Kernel& k, const ir::Launch& l, const std::string& param, const std::string& text);

// Triton's pointer type of a parameter ("*fp32"), or "".
std::string pointer_type(const ir::Kernel& k, const std::string& param);

// Whether Inductor's triton_meta declares `param` of `k` 16-byte divisible (`{(i,): [['tt.divisibility',
// 16]]}`): the compiler vectorizes through it on that promise, so a fused kernel may keep the promise
// for a parameter only where the buffer now bound to it had it too.
bool divisible(const ir::Kernel& k, const std::string& param);

// "*fp32" -> "tl.float32"; "" for an unknown type.
std::string tl_dtype(const std::string& pointer_type);

// Elements of an allocated buffer (its sizes' product), 0 when not an allocation with literal sizes.
int64_t numel_of(const ir::Function& f, const std::string& buffer);

// A tl.load or tl.store through `ptr + index`: its pointer parameter, index and mask (nullptr when none).
struct Access {
  std::string ptr;
  const py::Node* index = nullptr;
  const py::Node* mask = nullptr;
  const py::Node* value = nullptr;  // stores only
};
std::optional<Access> load_of(const py::Node* call);
std::optional<Access> store_of(const py::Node* call);

// The name a statement assigns when it is `name = value` (one plain name), else "".
std::string assigned(const py::Node* st);

// The value of a call's keyword argument `name` (`eviction_policy=...`), or nullptr.
const py::Node* keyword(const py::Node* call, std::string_view name);

// Whether `mask` is no mask at all, `None` or the kernel's plain `xmask`.
bool plain_mask(const py::Node* mask);

// The text of `node` (in `source`, its kernel's source) with each Name node whose id is in `names`
// prefixed by `prefix`: a statement moved into the other kernel keeps apart from that kernel's names.
std::string prefixed(const std::string& source, const py::Node* node, const std::set<std::string>& names,
                     const std::string& prefix);

// Calls that do not act elementwise (reductions, scans, program ids, aranges, atomics).
bool not_elementwise(const std::string& callee);

// The fused kernel's name: the producer's with the consumer's appended (without its `triton_`).
std::string fused_name(const ir::Kernel& producer, const ir::Kernel& consumer);

}  // namespace kopt::agents::fusion
