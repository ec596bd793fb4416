// The artifact IR: what an Inductor output module contains, read from its syntax
// tree. Kernels (the Triton sources Inductor wrote), and, per host function
// (`call`, `Runner.call`, `partition_N`), the ordered program: input checks,
// allocations, views, kernel launches, extern (vendor) calls and frees.
//
// Literal metadata (size_hints, triton_meta, inductor_meta) is kept as JSON so
// later stages and report.json can use it without another parser. Non-literal
// parts of such metadata (e.g. `ReductionHint.INNER`) become their source text.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/pyparse/ast.h"

namespace kopt::ir {

using json = nlohmann::json;

struct Span {
  py::Loc begin, end;  // byte offsets and line/col into the module source
};

struct KernelParam {
  std::string name;
  std::string dtype;  // triton signature type: "*fp32", "i32", "constexpr", ...
  // Annotated `tl.constexpr`: set by the launch config, not passed at launch.
  // (A parameter Inductor specialised to a constant, e.g. xnumel == 1, is typed
  // "constexpr" in the signature but still passed; `constant` holds its value.)
  bool is_constexpr = false;
  json constant;  // triton_meta.constants entry, or null
};

struct Kernel {
  std::string var;   // module variable the launches use (`var.run(...)`)
  std::string name;  // kernel name given to async_compile.triton
  std::string kind;  // heuristics decorator: pointwise, reduction, persistent_reduction, template, ...
  std::string entry;  // the @triton.jit entry function in `source`
  std::vector<std::string> helpers;  // other @triton.jit functions in `source`
  json size_hints;
  json triton_meta;
  json inductor_meta;
  json decorator_args;  // every other keyword of the heuristics decorator (reduction_hint, num_warps, ...)
  std::vector<KernelParam> signature;  // entry parameters, typed from triton_meta.signature
  std::vector<std::string> mutated_args;  // inductor_meta.mutated_arg_names
  std::vector<std::string> aten_ops;      // from the "Original ATen: [...]" comment
  std::vector<std::string> source_nodes;  // from "Topologically Sorted Source Nodes: [...]"
  std::string comment;  // the comment block Inductor wrote above the declaration (graph fragment included)
  std::string source;  // decoded kernel source (the string literal's value)
  Span decl;           // the whole `var = async_compile.triton(...)` statement
  Span literal;        // the source string literal, quotes included
  size_t launch_count = 0;
};

// One argument of a launch or extern call.
struct Arg {
  enum class Kind { Name, Int, Float, Bool, None, String, Expr };
  Kind kind = Kind::Expr;
  std::string text;   // source text (for Name: the variable)
  int64_t ivalue = 0;
  double fvalue = 0;
  std::string keyword;  // empty for positional arguments
};

struct Launch {
  size_t kernel = 0;       // index into Artifact::kernels
  std::vector<Arg> args;   // positional args in order, then keywords other than stream
  std::vector<std::pair<std::string, std::string>> bound;  // signature param -> arg text
  std::vector<Arg> extra;  // positional args past the signature (template grid ints)
  std::string stream;
  Span span;
};

struct ExternCall {
  std::string op;      // call target as written: extern_kernels.mm, torch.ops.aten.x.default
  std::vector<Arg> args;
  std::string out;     // `out=` buffer, or the assigned name(s) for `buf = op(...)`
  Span span;
};

struct Alloc {
  std::string buffer;
  std::vector<std::string> sizes, strides;  // as written (ints or symbolic expressions)
  std::string dtype;   // torch.float32
  std::string device;  // the allocator called: empty_strided_cuda / empty_strided_cpu / ...
  Span span;
};

struct View {
  std::string buffer, base;
  std::vector<std::string> sizes, strides;
  std::string offset;
  Span span;
};

struct Input {
  std::string name;
  size_t index = 0;  // position in the call() argument list
  std::vector<std::string> sizes, strides;  // from assert_size_stride when present
};

// Whether a host statement only looks up the launch stream (`stream0 = get_raw_stream(0)` on a GPU,
// `raw_streamNone = get_raw_stream(None)` where Inductor writes Triton kernels for CPU tensors): kept as
// an Other step, it computes nothing a region or a fused launch depends on besides the name.
bool is_stream_lookup(const std::string& statement);

// One statement of a host function, in program order.
struct Step {
  enum class Kind { Launch, Extern, Alloc, View, Alias, Del, Partition, Other };
  Kind kind;
  size_t index = 0;  // into the matching vector of Function (launches, externs, allocs, views)
  std::vector<std::string> names;  // Del: freed names; Alias: {new, old}; Partition: outputs
  std::string text;                // Other / Partition: the statement's source
  Span span;                       // the statement (host edits delete or move whole statements)
};

struct Function {
  std::string name;  // "call", "Runner.call", "partition_0"
  std::vector<Input> inputs;
  std::vector<Step> steps;
  std::vector<Launch> launches;
  std::vector<ExternCall> externs;
  std::vector<Alloc> allocs;
  std::vector<View> views;
  std::vector<std::string> returns;  // returned names / expressions
  // assert_size_stride(name, sizes, strides) on names that are not inputs (a vendor call's output):
  // name -> {sizes, strides} as written.
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> asserted;
  Span span;
};

struct Artifact {
  std::string path;
  std::unique_ptr<py::Module> module;  // the parsed module (kernels point into it)
  std::vector<Kernel> kernels;
  std::vector<Function> functions;
  std::string entry;  // the function `call()` resolves to

  const Kernel* find_kernel(std::string_view name_or_var) const;
  const Function* entry_function() const;
};

// Builds the IR of one Inductor output module. Throws kopt::UserError (with
// file:line:col) when the file is not an Inductor module or uses an unknown
// heuristics decorator.
std::unique_ptr<Artifact> build(std::string source, std::string path);
std::unique_ptr<Artifact> load(const std::string& path);

// Parses a kernel source (as found in async_compile.triton) into its entry
// function and helpers; used by build() and by the stitcher's checks.
struct KernelSource {
  std::unique_ptr<py::Module> module;
  const py::Node* entry = nullptr;  // FunctionDef
  std::vector<const py::Node*> jit_functions;
  const py::Node* heuristics = nullptr;  // the @triton_heuristics.X(...) Call, if any
};
KernelSource parse_kernel_source(const std::string& source, const std::string& name, const std::string& where);

// The serialised IR (inspect --json, report.json).
json to_json(const Artifact& a);

}  // namespace kopt::ir
