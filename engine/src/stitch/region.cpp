#include "stitch/region.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stitch/stitch.h"
#include "util/error.h"

namespace kopt::stitch {

std::pair<uint32_t, uint32_t> statement_lines(const std::string& src, const ir::Span& s) {
  uint32_t b = s.begin.offset, e = s.end.offset;
  while (b > 0 && (src[b - 1] == ' ' || src[b - 1] == '\t')) --b;
  if (b > 0 && src[b - 1] != '\n')
    throw UserError(fmt::format("line {}: the statement shares its line with another; cannot edit it alone",
                                s.begin.line));
  while (e < src.size() && (src[e] == ' ' || src[e] == '\t')) ++e;
  if (e < src.size() && src[e] == '\n') ++e;
  return {b, e};
}

namespace {

// The first replaced kernel's declaration with its name and source replaced.
std::string declaration(const std::string& src, const ir::Kernel& like, const NewLaunch& n) {
  std::string head = src.substr(like.decl.begin.offset, like.literal.begin.offset - like.decl.begin.offset);
  std::string tail = src.substr(like.literal.end.offset, like.decl.end.offset - like.literal.end.offset);
  head = std::regex_replace(head, std::regex("\\b" + like.var + "\\b"), n.kernel);
  if (like.name != like.var) head = std::regex_replace(head, std::regex("\\b" + like.name + "\\b"), n.kernel);
  return head + triple_quoted(n.source) + tail;
}

}  // namespace

std::vector<NewLaunch> RegionEdit::added() const {
  std::vector<NewLaunch> out = before;
  out.push_back({kernel, source, args});
  return out;
}

std::vector<py::Edit> region_edits(const ir::Artifact& art, const RegionEdit& r) {
  const ir::Function* f = art.entry_function();
  if (!f || r.launches.empty()) throw UserError("region edit: no entry function or no launch to fuse");
  const std::string& src = art.module->source();
  for (size_t i : r.launches)
    if (i >= f->launches.size()) throw UserError(fmt::format("region edit: launch {} out of range", i));
  std::vector<NewLaunch> added = r.added();
  std::set<std::string> names;
  for (const NewLaunch& n : added)
    if (art.find_kernel(n.kernel) || !names.insert(n.kernel).second)
      throw UserError(fmt::format("region edit: kernel name {} is taken", n.kernel));
  for (const Scratch& sc : r.scratch) {
    static const std::regex word(R"(\w+)");
    if (!std::regex_match(sc.name, word) || src.find(sc.name) != std::string::npos)
      throw UserError(fmt::format("region edit: scratch buffer name {} is used in the module already", sc.name));
  }
  std::set<std::string> internal(r.internal.begin(), r.internal.end());
  for (const ir::View& v : f->views)
    if (internal.count(v.base) || internal.count(v.buffer))
      throw UserError(fmt::format("region edit: internal buffer {} has a view", v.base));
  for (const ir::Step& s : f->steps)
    if (s.kind == ir::Step::Kind::Alias)
      for (const std::string& n : s.names)
        if (internal.count(n)) throw UserError(fmt::format("region edit: internal buffer {} is aliased", n));

  std::vector<py::Edit> edits;
  // The declaration, after the last fused kernel's.
  const ir::Kernel* last_decl = nullptr;
  for (size_t i : r.launches) {
    const ir::Kernel& k = art.kernels[f->launches[i].kernel];
    if (!last_decl || k.decl.end.offset > last_decl->decl.end.offset) last_decl = &k;
  }
  const ir::Kernel& first_kernel = art.kernels[f->launches[r.launches.front()].kernel];
  std::string decls;
  for (const NewLaunch& n : added) decls += "\n\n\n" + declaration(src, first_kernel, n);
  edits.push_back({last_decl->decl.end.offset, last_decl->decl.end.offset, decls});

  std::vector<size_t> order = r.launches;
  std::sort(order.begin(), order.end());
  const ir::Launch& first = f->launches[order.front()];
  const ir::Launch& last = f->launches[order.back()];
  // Buffers the fused launch passes: an allocation of one between the fused launches moves up.
  std::set<std::string> passed;
  static const std::regex ident(R"([A-Za-z_]\w*)");
  for (auto it = std::sregex_iterator(r.args.begin(), r.args.end(), ident); it != std::sregex_iterator(); ++it)
    passed.insert(it->str());
  auto between = [&](const ir::Step& s) {
    return s.span.begin.offset > first.span.begin.offset && s.span.begin.offset < last.span.begin.offset;
  };
  std::string moved;
  for (const ir::Step& s : f->steps) {
    if (s.kind != ir::Step::Kind::Alloc) continue;
    const std::string& buf = f->allocs[s.index].buffer;
    auto [b, e] = statement_lines(src, s.span);
    if (internal.count(buf)) {
      edits.push_back({b, e, ""});
    } else if (passed.count(buf) && between(s)) {
      moved += src.substr(b, e - b);
      edits.push_back({b, e, ""});
    }
  }
  for (const ir::Step& s : f->steps) {
    if (s.kind == ir::Step::Kind::Del) {
      std::vector<std::string> kept;
      for (const std::string& n : s.names)
        if (!internal.count(n)) kept.push_back(n);
      if (kept.size() == s.names.size()) continue;
      auto [b, e] = statement_lines(src, s.span);
      if (kept.empty()) edits.push_back({b, e, ""});
      else edits.push_back({s.span.begin.offset, s.span.end.offset, fmt::format("del {}", fmt::join(kept, ", "))});
    } else if (s.kind == ir::Step::Kind::Launch && std::count(order.begin(), order.end(), s.index)) {
      const ir::Launch& l = f->launches[s.index];
      auto [b, e] = statement_lines(src, l.span);
      if (&l != &first) {
        edits.push_back({b, e, ""});
        continue;
      }
      std::string stream = l.stream.empty() ? "" : ", stream=" + l.stream;
      std::string indent = src.substr(b, l.span.begin.offset - b);
      std::string ahead = moved;
      for (const Scratch& sc : r.scratch) ahead += indent + sc.statement + "\n";
      for (const NewLaunch& n : r.before) ahead += indent + fmt::format("{}.run({}{})\n", n.kernel, n.args, stream);
      if (!ahead.empty()) edits.push_back({b, b, ahead});
      edits.push_back({l.span.begin.offset, l.span.end.offset, fmt::format("{}.run({}{})", r.kernel, r.args, stream)});
      if (!r.scratch.empty()) {
        std::vector<std::string> scratch;
        for (const Scratch& sc : r.scratch) scratch.push_back(sc.name);
        edits.push_back({e, e, fmt::format("{}del {}\n", indent, fmt::join(scratch, ", "))});
      }
    }
  }
  return edits;
}

}  // namespace kopt::stitch
