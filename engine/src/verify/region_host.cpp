#include "verify/region_host.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stitch/stitch.h"
#include "verify/outputs.h"

namespace kopt::verify {

std::string storage_of(const ir::Function& f, std::string text) {
  static const std::regex inline_view(R"(^\s*reinterpret_tensor\(\s*(\w+))");
  std::smatch m;
  if (std::regex_search(text, m, inline_view)) text = m[1];
  std::map<std::string, std::string> parent;
  for (const ir::View& v : f.views) parent[v.buffer] = v.base;
  for (const ir::Step& s : f.steps)
    if (s.kind == ir::Step::Kind::Alias && s.names.size() == 2) parent[s.names[0]] = s.names[1];
  for (int hops = 0; hops < 64 && parent.count(text); ++hops) text = parent[text];
  return text;
}

void accesses(const ir::Kernel& k, const ir::Launch& l, const ir::Function& f, std::set<std::string>& writes,
              std::set<std::string>& reads) {
  PointerWrites w = pointer_writes(k);
  std::set<size_t> stored(w.stored.begin(), w.stored.end()), pure(w.pure.begin(), w.pure.end());
  std::map<std::string, std::string> bound(l.bound.begin(), l.bound.end());
  size_t i = 0;
  for (const ir::KernelParam& p : k.signature) {
    if (p.is_constexpr) continue;
    size_t at = i++;
    if (p.dtype.empty() || p.dtype[0] != '*' || !bound.count(p.name)) continue;
    std::string s = storage_of(f, bound[p.name]);
    if (stored.count(at)) writes.insert(s);
    if (!pure.count(at)) reads.insert(s);
  }
}

std::string span_text(const ir::Artifact& a, const ir::Span& s) {
  return a.module->source().substr(s.begin.offset, s.end.offset - s.begin.offset);
}

namespace {

// The first line where two texts differ, as "line N: expected `...`, found `...`".
std::string first_difference(const std::string& want, const std::string& got) {
  size_t line = 1, a = 0, b = 0;
  while (a < want.size() || b < got.size()) {
    size_t ea = std::min(want.find('\n', a), want.size()), eb = std::min(got.find('\n', b), got.size());
    std::string la = want.substr(a, ea - a), lb = got.substr(b, eb - b);
    if (la != lb) return fmt::format("line {}: the allowed edit has `{}`, the candidate `{}`", line, la, lb);
    a = ea + 1, b = eb + 1, ++line;
  }
  return "the texts differ";
}

Finding fail(const std::string& check, std::string message) { return {check, false, std::move(message)}; }

// An allocation's bytes when its sizes are literal and its dtype known; -1 otherwise.
int64_t alloc_bytes(const ir::Alloc& al) {
  static const std::map<std::string, int64_t> widths = {{"torch.float32", 4}, {"torch.float16", 2},
                                                        {"torch.bfloat16", 2}, {"torch.float64", 8},
                                                        {"torch.int32", 4}, {"torch.int64", 8}};
  auto w = widths.find(al.dtype);
  if (w == widths.end()) return -1;
  int64_t width = w->second;
  int64_t n = 1;
  for (const std::string& s : al.sizes) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 15) return -1;
    n *= std::stoll(s);
    if (n > (int64_t{1} << 40)) return -1;
  }
  return n * width;
}

std::string describe_added(const stitch::RegionEdit& e) {
  if (e.before.empty()) return e.kernel;
  std::vector<std::string> names;
  for (const stitch::NewLaunch& n : e.added()) names.push_back(n.kernel);
  return fmt::format("{} launches ({})", names.size(), fmt::join(names, ", "));
}

}  // namespace

RegionG1 check_region(const ir::Artifact& original, const RegionFacts& facts, const std::string& candidate) {
  RegionG1 out;
  auto done = [&](Finding f) {
    out.g1.findings.push_back(std::move(f));
    out.g1.passed = false;
    return out;
  };
  std::unique_ptr<ir::Artifact> cand;
  try {
    cand = ir::build(candidate, "candidate module");
  } catch (const std::exception& e) {
    return done(fail("module_parses", e.what()));
  }
  out.g1.findings.push_back({"module_parses", true, "the candidate module parses"});
  const ir::Function* f = original.entry_function();
  const ir::Function* cf = cand->entry_function();
  if (!f || !cf) return done(fail("host_code_edit", "no entry function"));

  // The kernels the candidate adds, each launched once: the last launched is the fused kernel, any
  // before it a split's earlier passes.
  std::vector<const ir::Kernel*> added;
  for (const ir::Kernel& k : cand->kernels)
    if (!original.find_kernel(k.name)) added.push_back(&k);
  if (added.empty() || added.size() > kMaxAddedKernels)
    return done(fail("host_code_edit", fmt::format("the candidate adds {} kernels; a region candidate adds 1 to {}",
                                                   added.size(), kMaxAddedKernels)));
  std::vector<const ir::Launch*> new_launches;  // in call order
  for (const ir::Kernel* k : added) {
    size_t n = 0;
    for (const ir::Launch& l : cf->launches) n += &cand->kernels[l.kernel] == k;
    if (n != 1)
      return done(fail("host_code_edit", fmt::format("the new kernel {} is launched {} times, not once", k->name, n)));
  }
  for (const ir::Launch& l : cf->launches)
    if (std::count(added.begin(), added.end(), &cand->kernels[l.kernel])) new_launches.push_back(&l);

  // The original launches the candidate no longer makes (matched in order by their text): all of
  // them in the region.
  std::multiset<std::string> kept;
  for (const ir::Launch& l : cf->launches)
    if (!std::count(new_launches.begin(), new_launches.end(), &l)) kept.insert(span_text(*cand, l.span));
  stitch::RegionEdit edit;
  for (size_t i = 0; i < f->launches.size(); ++i) {
    auto it = kept.find(span_text(original, f->launches[i].span));
    if (it != kept.end()) {
      kept.erase(it);
      continue;
    }
    if (!std::count(facts.launches.begin(), facts.launches.end(), i))
      return done(fail("host_code_edit", fmt::format("line {}: the launch `{}` is not part of the region, and the "
                                                     "candidate changes or removes it",
                                                     f->launches[i].span.begin.line,
                                                     span_text(original, f->launches[i].span))));
    edit.launches.push_back(i);
  }
  // One new kernel in place of one launch is a region edit only as a relaunch: its launch binds some parameter
  // to another argument (the column loop's grid over the columns); with the same arguments it is a kernel
  // candidate, which the kernel cascade judges.
  auto relaunch = [&] {
    if (added.size() != 1 || edit.launches.size() != 1 || new_launches.size() != 1) return false;
    return new_launches[0]->bound != f->launches[edit.launches[0]].bound;
  };
  if (edit.launches.empty() || (added.size() == 1 && edit.launches.size() < 2 && !relaunch()))
    return done(fail("host_code_edit", added.size() == 1
                                           ? "the candidate replaces fewer than two launches of the region, and "
                                             "relaunches none with other arguments"
                                           : "the candidate replaces no launch of the region"));
  // Scratch: buffers the original does not allocate, passed by the new launches alone, small.
  std::set<std::string> original_allocs;
  for (const ir::Alloc& al : f->allocs) original_allocs.insert(al.buffer);
  for (const ir::Step& s : cf->steps) {
    if (s.kind != ir::Step::Kind::Alloc) continue;
    const ir::Alloc& al = cf->allocs[s.index];
    if (original_allocs.count(al.buffer)) continue;
    int64_t bytes = alloc_bytes(al);
    if (bytes < 0 || bytes > kMaxScratchBytes)
      return done(fail("host_code_edit", fmt::format("line {}: the scratch allocation of {} is {}; a region "
                                                     "candidate may allocate at most {} bytes of literal size",
                                                     s.span.begin.line, al.buffer,
                                                     bytes < 0 ? "not of literal size and dtype"
                                                               : std::to_string(bytes) + " bytes",
                                                     kMaxScratchBytes)));
    edit.scratch.push_back({al.buffer, span_text(*cand, s.span)});
  }
  for (const ir::Launch& l : cf->launches) {
    if (std::count(new_launches.begin(), new_launches.end(), &l)) continue;
    for (const auto& [param, text] : l.bound)
      for (const stitch::Scratch& sc : edit.scratch)
        if (storage_of(*cf, text) == sc.name)
          return done(fail("host_code_edit", fmt::format("line {}: `{}` passes the scratch buffer {}; only the new "
                                                         "launches may", l.span.begin.line, span_text(*cand, l.span),
                                                         sc.name)));
  }
  // Internal buffers whose allocation is gone.
  std::set<std::string> allocated;
  for (const ir::Alloc& al : cf->allocs) allocated.insert(al.buffer);
  for (const std::string& b : facts.internal)
    if (!allocated.count(b)) edit.internal.push_back(b);
  // A buffer no longer allocated must be passed by no launch left.
  for (const ir::Launch& l : cf->launches)
    for (const auto& [param, text] : l.bound)
      if (std::count(edit.internal.begin(), edit.internal.end(), storage_of(*cf, text)))
        return done(fail("host_code_edit",
                         fmt::format("line {}: `{}` passes {}, whose allocation the candidate removes",
                                     l.span.begin.line, span_text(*cand, l.span), text)));
  for (const ir::Launch* l : new_launches) {
    const ir::Kernel& k = cand->kernels[l->kernel];
    std::vector<std::string> args;
    for (const ir::Arg& a : l->args) args.push_back(a.keyword.empty() ? a.text : a.keyword + "=" + a.text);
    stitch::NewLaunch n{k.name, k.source, fmt::format("{}", fmt::join(args, ", "))};
    if (l == new_launches.back()) edit.kernel = n.kernel, edit.source = n.source, edit.args = n.args;
    else edit.before.push_back(std::move(n));
  }
  std::string expected;
  try {
    expected = stitch::stitch(original, {}, {}, {edit});
  } catch (const std::exception& e) {
    return done(fail("host_code_edit", e.what()));
  }
  if (expected != candidate)
    return done(fail("host_code_edit",
                     "the candidate's module differs from the original beyond the region's allowed edits (the new "
                     "launches and their scratch, the removed launches and internal buffers, moved allocations): " +
                         first_difference(expected, candidate)));
  out.g1.findings.push_back(
      {"host_code_edit", true,
       fmt::format("the original module with {} launch(es) replaced by {} and {} internal buffer(s) removed{}, "
                   "nothing else",
                   edit.launches.size(), describe_added(edit), edit.internal.size(),
                   edit.scratch.empty() ? "" : fmt::format(", {} scratch buffer(s) added", edit.scratch.size()))});

  // What the new launches pass and write: the region's buffers and their scratch only, every output the
  // removed launches wrote.
  std::set<std::string> region(facts.inputs.begin(), facts.inputs.end());
  region.insert(facts.outputs.begin(), facts.outputs.end());
  std::set<std::string> scratch;
  for (const stitch::Scratch& sc : edit.scratch) scratch.insert(sc.name);
  std::set<std::string> writes, removed_writes, removed_reads;
  for (size_t i : edit.launches)
    accesses(original.kernels[f->launches[i].kernel], f->launches[i], *f, removed_writes, removed_reads);
  // Internal buffers the edit keeps (a split of one launch of a longer region): the new launches stand in
  // for the removed ones there too, reading what those read, writing what those wrote.
  std::set<std::string> kept_read, kept_written;
  for (const std::string& b : facts.internal) {
    if (std::count(edit.internal.begin(), edit.internal.end(), b)) continue;
    if (removed_writes.count(b)) kept_written.insert(b), kept_read.insert(b);
    if (removed_reads.count(b)) kept_read.insert(b);
  }
  std::vector<std::string> problems;
  for (const ir::Launch* l : new_launches) {
    const ir::Kernel& k = cand->kernels[l->kernel];
    std::set<std::string> w, reads;
    accesses(k, *l, *cf, w, reads);
    for (const std::string& s : reads)
      if (!region.count(s) && !scratch.count(s) && !kept_read.count(s))
        problems.push_back(fmt::format("{} reads {}, which is none of the region's buffers", k.name, s));
    for (const std::string& s : w)
      if (!scratch.count(s) && !kept_written.count(s) && !std::count(facts.outputs.begin(), facts.outputs.end(), s))
        problems.push_back(fmt::format("{} writes {}, which is not an output of the region", k.name, s));
    writes.insert(w.begin(), w.end());
  }
  for (const std::string& s : facts.outputs)
    if (removed_writes.count(s) && !writes.count(s))
      problems.push_back(fmt::format("no new launch writes {}, which the removed launches wrote and is read after "
                                     "the region", s));
  for (const std::string& s : kept_written)
    if (!writes.count(s))
      problems.push_back(fmt::format("no new launch writes {}, which the removed launches wrote and a launch the "
                                     "edit keeps reads", s));
  if (!problems.empty())
    return done(fail("fused_launch", fmt::format("the new launches: {}", fmt::join(problems, "; "))));
  out.g1.findings.push_back({"fused_launch", true,
                             fmt::format("pass only the region's buffers{}; write {}",
                                         scratch.empty() ? "" : " and their scratch", fmt::join(writes, ", "))});

  // The new kernels' own sources: the static checks, each against itself (their stores are judged above).
  out.g1.passed = true;
  for (const ir::Kernel* k : added) {
    G1Result r = run_g1(*k, k->source);
    for (Finding& x : r.findings) out.g1.findings.push_back(std::move(x));
    out.g1.passed = out.g1.passed && r.passed;
  }
  out.edit = std::move(edit);
  return out;
}

}  // namespace kopt::verify
