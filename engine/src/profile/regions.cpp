#include "profile/regions.h"

#include <map>
#include <optional>
#include <regex>
#include <set>

#include "profile/roofline.h"
#include "verify/outputs.h"

namespace kopt::profile {

using nlohmann::json;

uint64_t Region::floor_bytes() const {
  uint64_t n = 0;
  for (const auto& b : inputs) n += b.bytes;
  for (const auto& b : outputs) n += b.bytes;
  return n;
}

uint64_t Region::internal_bytes() const {
  uint64_t n = 0;
  for (const auto& b : internal) n += b.bytes;
  return n;
}

namespace {

// Statements between launches that compute nothing: a region goes on across them. Anything else
// that is not a launch (a vendor call, a partition, an aten fallback, a copy) ends it.
bool bookkeeping(const std::string& text) {
  static const std::regex re(R"(^\s*(torch\.cuda\.|assert_|pass\b|#))");
  return ir::is_stream_lookup(text) || std::regex_search(text, re);
}

class Storages {
 public:
  explicit Storages(const ir::Function& f) {
    for (const ir::Input& in : f.inputs) known_.insert(in.name);
    for (const ir::Alloc& a : f.allocs) known_.insert(a.buffer);
    // A vendor call's result (`buf2 = extern_kernels.convolution(...)`) is a storage too.
    static const std::regex name(R"(\w+)");
    for (const ir::ExternCall& e : f.externs)
      for (auto it = std::sregex_iterator(e.out.begin(), e.out.end(), name); it != std::sregex_iterator(); ++it)
        known_.insert(it->str());
    for (const ir::View& v : f.views) parent_[v.buffer] = v.base;
    for (const ir::Step& s : f.steps)
      if (s.kind == ir::Step::Kind::Alias && s.names.size() == 2) parent_[s.names[0]] = s.names[1];
  }

  // The storage an argument's text names: through views (named or written inline as
  // reinterpret_tensor(buf, ...)) and aliases (`buf4 = buf2  # reuse`) down to a call() input or an
  // allocation; nullopt for anything else (a numel, an expression).
  std::optional<std::string> of(std::string text) const {
    static const std::regex inline_view(R"(^\s*reinterpret_tensor\(\s*(\w+))");
    std::smatch m;
    if (std::regex_search(text, m, inline_view)) text = m[1];
    for (int hops = 0; hops < 64; ++hops) {
      auto p = parent_.find(text);
      if (p == parent_.end()) break;
      text = p->second;
    }
    if (!known_.count(text)) return std::nullopt;
    return text;
  }

  // Every storage a piece of code mentions (an extern's arguments, a return, a statement).
  void mentioned(const std::string& code, std::set<std::string>& out) const {
    static const std::regex ident(R"([A-Za-z_]\w*)");
    for (auto it = std::sregex_iterator(code.begin(), code.end(), ident); it != std::sregex_iterator(); ++it)
      if (auto s = of(it->str())) out.insert(*s);
  }

 private:
  std::set<std::string> known_;
  std::map<std::string, std::string> parent_;
};

// Bytes of a tensor given as written in the host code (sizes, strides, a dtype name).
uint64_t written_bytes(const std::vector<std::string>& sizes, const std::vector<std::string>& strides,
                       const std::string& dtype) {
  json t = {{"shape", json::array()}, {"stride", json::array()}, {"dtype", dtype}};
  try {
    for (const std::string& s : sizes) t["shape"].push_back(std::stoll(s));
    for (const std::string& s : strides) t["stride"].push_back(std::stoll(s));
  } catch (const std::exception&) {
    return 0;  // a symbolic size: not known here
  }
  if (sizes.empty()) return dtype_size(dtype);  // a 0-d tensor
  return tensor_bytes(t);
}

// What a launch reads and writes, as storages: a pointer parameter the kernel stores through is
// written; one it does not only store to (pointer_writes' `pure`) is read — an in-place buffer both.
struct Access {
  std::vector<std::string> reads, writes;
  std::map<std::string, std::string> dtypes;  // storage -> the pointer type the kernel reads it as
};

Access access(const ir::Kernel& k, const ir::Launch& l, const Storages& st) {
  verify::PointerWrites w = verify::pointer_writes(k);
  std::set<size_t> stored(w.stored.begin(), w.stored.end()), pure(w.pure.begin(), w.pure.end());
  std::map<std::string, std::string> bound(l.bound.begin(), l.bound.end());
  Access out;
  size_t runtime = 0;
  for (const ir::KernelParam& p : k.signature) {
    if (p.is_constexpr) continue;
    size_t i = runtime++;
    if (p.dtype.empty() || p.dtype[0] != '*') continue;
    auto b = bound.find(p.name);
    if (b == bound.end()) continue;
    auto s = st.of(b->second);
    if (!s) continue;
    out.dtypes.emplace(*s, p.dtype);
    if (!pure.count(i)) out.reads.push_back(*s);
    if (stored.count(i)) out.writes.push_back(*s);
  }
  return out;
}

}  // namespace

std::vector<Region> regions(const ir::Artifact& a, const ir::Function& f, const json& graph_args) {
  Storages st(f);
  std::map<std::string, uint64_t> bytes;
  for (const ir::Alloc& al : f.allocs)
    bytes[al.buffer] =
        std::max(bytes[al.buffer], written_bytes(al.sizes, al.strides, al.dtype.substr(al.dtype.rfind('.') + 1)));
  for (const ir::Input& in : f.inputs)
    if (graph_args.is_array() && in.index < graph_args.size()) bytes[in.name] = tensor_bytes(graph_args[in.index]);
  std::set<std::string> call_inputs;
  for (const ir::Input& in : f.inputs) call_inputs.insert(in.name);

  // Launch runs, split at every step that computes and is not a launch.
  std::vector<std::pair<size_t, size_t>> runs;  // [first step, last step] of each run
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t open = kNone, last = 0;
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const ir::Step& s = f.steps[i];
    bool ends = s.kind == ir::Step::Kind::Extern || s.kind == ir::Step::Kind::Partition ||
                (s.kind == ir::Step::Kind::Other && !bookkeeping(s.text));
    if (s.kind == ir::Step::Kind::Launch) {
      if (open == kNone) open = i;
      last = i;
    } else if (ends && open != kNone) {
      runs.emplace_back(open, last);
      open = kNone;
    }
  }
  if (open != kNone) runs.emplace_back(open, last);

  // What each step mentions, for "read after the region".
  auto mentions = [&](const ir::Step& s, std::set<std::string>& out) {
    switch (s.kind) {
      case ir::Step::Kind::Launch: {
        const ir::Launch& l = f.launches[s.index];
        for (const auto& [p, text] : l.bound) st.mentioned(text, out);
        break;
      }
      case ir::Step::Kind::Extern: {
        const ir::ExternCall& e = f.externs[s.index];
        for (const ir::Arg& arg : e.args) st.mentioned(arg.text, out);
        st.mentioned(e.out, out);
        break;
      }
      case ir::Step::Kind::View: st.mentioned(f.views[s.index].base, out); break;
      case ir::Step::Kind::Other:
      case ir::Step::Kind::Partition: st.mentioned(s.text, out); break;
      default: break;
    }
  };
  std::set<std::string> returned;
  for (const std::string& r : f.returns) st.mentioned(r, returned);

  std::vector<Region> out;
  for (const auto& [first, end] : runs) {
    Region r;
    std::vector<std::string> order;  // storages in order of first access
    std::map<std::string, bool> first_is_read, written;
    for (size_t i = first; i <= end; ++i) {
      if (f.steps[i].kind != ir::Step::Kind::Launch) continue;
      const ir::Launch& l = f.launches[f.steps[i].index];
      r.launches.push_back(f.steps[i].index);
      Access acc = access(a.kernels[l.kernel], l, st);
      // A vendor call's result: its size from the assert after the call, its dtype as the kernel reads it.
      for (const auto& [s, ptr] : acc.dtypes)
        if (!bytes.count(s) && f.asserted.count(s))
          bytes[s] = written_bytes(f.asserted.at(s).first, f.asserted.at(s).second, pointee_dtype(ptr));
      for (const std::string& s : acc.reads)
        if (!first_is_read.count(s)) first_is_read[s] = true, order.push_back(s);
      for (const std::string& s : acc.writes) {
        if (!first_is_read.count(s)) first_is_read[s] = false, order.push_back(s);
        written[s] = true;
      }
    }
    std::set<std::string> after;
    for (size_t i = end + 1; i < f.steps.size(); ++i) mentions(f.steps[i], after);
    for (const std::string& s : order) {
      RegionBuffer b{s, bytes.count(s) ? bytes[s] : 0};
      if (first_is_read[s]) r.inputs.push_back(b);
      if (!written.count(s)) continue;
      if (after.count(s) || returned.count(s) || call_inputs.count(s)) r.outputs.push_back(b);
      else r.internal.push_back(b);
    }
    out.push_back(std::move(r));
  }
  return out;
}

json to_json(const ir::Artifact& a, const ir::Function& f, const std::vector<Region>& rs) {
  json out = json::array();
  auto buffers = [](const std::vector<RegionBuffer>& bs) {
    json j = json::array();
    for (const RegionBuffer& b : bs) j.push_back({{"name", b.name}, {"bytes", b.bytes}});
    return j;
  };
  for (const Region& r : rs) {
    json kernels = json::array();
    for (size_t i : r.launches) kernels.push_back(a.kernels[f.launches[i].kernel].name);
    out.push_back({{"kernels", kernels}, {"inputs", buffers(r.inputs)}, {"outputs", buffers(r.outputs)},
                   {"internal", buffers(r.internal)}, {"floor_bytes", r.floor_bytes()},
                   {"internal_bytes", r.internal_bytes()}});
  }
  return out;
}

std::vector<std::string> names(const std::vector<RegionBuffer>& buffers) {
  std::vector<std::string> out;
  for (const RegionBuffer& b : buffers) out.push_back(b.name);
  return out;
}

verify::RegionFacts facts(const Region& r) {
  return {r.launches, names(r.inputs), names(r.outputs), names(r.internal)};
}

}  // namespace kopt::profile
