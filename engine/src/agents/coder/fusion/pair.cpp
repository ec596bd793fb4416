#include "agents/coder/fusion/pair.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::fusion {

std::string param_bound(const ir::Launch& l, const std::string& name) {
  std::string found;
  for (const auto& [p, text] : l.bound)
    if (text == name) {
      if (!found.empty()) return "";
      found = p;
    }
  return found;
}

std::string arg_of(const ir::Launch& l, const std::string& param) {
  for (const auto& [p, text] : l.bound)
    if (p == param) return text;
  return "";
}

std::string args_with(const ir::Kernel& k, const ir::Launch& l, const std::string& param, const std::string& text) {
  // Bound positionally in signature order (constexprs are not passed); keywords keep their names.
  std::vector<std::string> runtime;
  for (const ir::KernelParam& p : k.signature)
    if (!p.is_constexpr) runtime.push_back(p.name);
  std::string out;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const ir::Arg& a = l.args[i];
    std::string name = !a.keyword.empty() ? a.keyword : i < runtime.size() ? runtime[i] : "";
    std::string v = name == param ? text : a.text;
    out += (out.empty() ? "" : ", ") + (a.keyword.empty() ? v : a.keyword + "=" + v);
  }
  return out;
}

std::string pointer_type(const ir::Kernel& k, const std::string& param) {
  for (const ir::KernelParam& p : k.signature)
    if (p.name == param && !p.dtype.empty() && p.dtype[0] == '*') return p.dtype;
  return "";
}

bool divisible(const ir::Kernel& k, const std::string& param) {
  const auto& configs = k.triton_meta.value("configs", nlohmann::json::array());
  if (!configs.is_array() || configs.empty() || !configs[0].is_object()) return false;
  for (size_t i = 0; i < k.signature.size(); ++i)
    if (k.signature[i].name == param) {
      auto it = configs[0].find(fmt::format("({},)", i));
      return it != configs[0].end() && it->dump().find("tt.divisibility") != std::string::npos;
    }
  return false;
}

std::string tl_dtype(const std::string& t) {
  static const std::map<std::string, std::string> names = {
      {"*fp64", "tl.float64"}, {"*fp32", "tl.float32"}, {"*fp16", "tl.float16"}, {"*bf16", "tl.bfloat16"},
      {"*i64", "tl.int64"},    {"*i32", "tl.int32"},    {"*i16", "tl.int16"},   {"*i8", "tl.int8"},
      {"*u8", "tl.uint8"},     {"*i1", "tl.int1"}};
  auto it = names.find(t);
  return it == names.end() ? "" : it->second;
}

int64_t numel_of(const ir::Function& f, const std::string& buffer) {
  for (const ir::Alloc& a : f.allocs) {
    if (a.buffer != buffer) continue;
    int64_t n = 1;
    try {
      for (const std::string& s : a.sizes) n *= std::stoll(s);
    } catch (const std::exception&) {
      return 0;
    }
    return n;
  }
  return 0;
}

namespace {

std::optional<Access> access(const py::Node* call, std::string_view fn) {
  if (!ir::is_tl_call(call, fn) || call->list("args").empty()) return std::nullopt;
  const py::Node* p = call->list("args")[0];
  if (!p->is("BinOp") || p->ident("op") != "Add" || !p->child("left")->is("Name")) return std::nullopt;
  Access a{std::string(p->child("left")->ident("id")), p->child("right"), nullptr, nullptr};
  const auto& args = call->list("args");
  size_t mask_at = fn == "store" ? 2 : 1;
  if (fn == "store") a.value = args.size() > 1 ? args[1] : keyword(call, "value");
  a.mask = args.size() > mask_at ? args[mask_at] : keyword(call, "mask");
  return a;
}

}  // namespace

std::string assigned(const py::Node* st) {
  if (!st->is("Assign") || st->list("targets").size() != 1 || !st->list("targets")[0]->is("Name")) return "";
  return std::string(st->list("targets")[0]->ident("id"));
}

const py::Node* keyword(const py::Node* call, std::string_view name) {
  for (const py::Node* kw : call->list("keywords"))
    if (kw->ident("arg") == name) return kw->child("value");
  return nullptr;
}

std::optional<Access> load_of(const py::Node* call) { return access(call, "load"); }
std::optional<Access> store_of(const py::Node* call) { return access(call, "store"); }

bool plain_mask(const py::Node* mask) {
  return !mask || (mask->is("Constant") && mask->const_kind == py::ConstKind::None) ||
         (mask->is("Name") && mask->ident("id") == "xmask");
}

std::string prefixed(const std::string& source, const py::Node* node, const std::set<std::string>& names,
                     const std::string& prefix) {
  std::vector<std::pair<uint32_t, std::string>> at;
  py::walk(node, [&](const py::Node* n) {
    if (n->is("Name") && names.count(std::string(n->ident("id")))) at.emplace_back(n->begin.offset, prefix);
  });
  std::sort(at.begin(), at.end());
  std::string out;
  uint32_t pos = node->begin.offset;
  for (const auto& [o, p] : at) {
    out += source.substr(pos, o - pos) + p;
    pos = o;
  }
  return out + source.substr(pos, node->end.offset - pos);
}

bool not_elementwise(const std::string& f) {
  static const std::set<std::string> kNames = {
      "tl.arange", "tl.sum", "tl.max", "tl.min", "tl.reduce", "tl.cumsum", "tl.cumprod", "tl.associative_scan",
      "tl.program_id", "tl.num_programs", "tl.reshape", "tl.view", "tl.sort", "tl.argmax", "tl.argmin",
      "tl.inline_asm_elementwise", "tl.xor_sum", "tl.gather", "tl.histogram", "tl.split", "tl.join", "tl.load",
      "tl.store", "tl.rand", "tl.randn", "tl.randint"};
  if (kNames.count(f) || f.rfind("tl.atomic", 0) == 0) return true;
  if (f.rfind("triton_helpers.", 0) != 0) return false;
  return f.find("max2") != std::string::npos || f.find("min2") != std::string::npos ||
         f.find("with_index") != std::string::npos || f.find("welford") != std::string::npos ||
         f.find("scan") != std::string::npos || f == "triton_helpers.any" || f == "triton_helpers.prod";
}

std::string fused_name(const ir::Kernel& producer, const ir::Kernel& consumer) {
  std::string c = consumer.name;
  if (c.rfind("triton_", 0) == 0) c = c.substr(7);
  return producer.name + "_" + c;
}

}  // namespace kopt::agents::fusion
