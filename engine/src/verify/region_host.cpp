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

namespace {

std::string launch_text(const ir::Artifact& a, const ir::Launch& l) {
  return a.module->source().substr(l.span.begin.offset, l.span.end.offset - l.span.begin.offset);
}


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

  // The one kernel the candidate adds.
  std::vector<const ir::Kernel*> added;
  for (const ir::Kernel& k : cand->kernels)
    if (!original.find_kernel(k.name)) added.push_back(&k);
  if (added.size() != 1)
    return done(fail("host_code_edit", fmt::format("the candidate adds {} kernels; a region candidate adds exactly one",
                                                   added.size())));
  const ir::Kernel& fused = *added[0];
  std::vector<const ir::Launch*> fused_launches;
  for (const ir::Launch& l : cf->launches)
    if (&cand->kernels[l.kernel] == &fused) fused_launches.push_back(&l);
  if (fused_launches.size() != 1)
    return done(fail("host_code_edit", fmt::format("the fused kernel {} is launched {} times, not once", fused.name,
                                                   fused_launches.size())));

  // The original launches the candidate no longer makes (matched in order by their text): all of
  // them in the region.
  std::multiset<std::string> kept;
  for (const ir::Launch& l : cf->launches)
    if (&l != fused_launches[0]) kept.insert(launch_text(*cand, l));
  stitch::RegionEdit edit;
  for (size_t i = 0; i < f->launches.size(); ++i) {
    auto it = kept.find(launch_text(original, f->launches[i]));
    if (it != kept.end()) {
      kept.erase(it);
      continue;
    }
    if (!std::count(facts.launches.begin(), facts.launches.end(), i))
      return done(fail("host_code_edit", fmt::format("line {}: the launch `{}` is not part of the region, and the "
                                                     "candidate changes or removes it",
                                                     f->launches[i].span.begin.line,
                                                     launch_text(original, f->launches[i]))));
    edit.launches.push_back(i);
  }
  if (edit.launches.size() < 2)
    return done(fail("host_code_edit", "the candidate replaces fewer than two launches of the region"));
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
                                     l.span.begin.line, launch_text(*cand, l), text)));
  edit.kernel = fused.name;
  edit.source = fused.source;
  std::vector<std::string> args;
  for (const ir::Arg& a : fused_launches[0]->args)
    args.push_back(a.keyword.empty() ? a.text : a.keyword + "=" + a.text);
  edit.args = fmt::format("{}", fmt::join(args, ", "));
  std::string expected;
  try {
    expected = stitch::stitch(original, {}, {}, {edit});
  } catch (const std::exception& e) {
    return done(fail("host_code_edit", e.what()));
  }
  if (expected != candidate)
    return done(fail("host_code_edit",
                     "the candidate's module differs from the original beyond the region's allowed edits (the fused "
                     "launch, the removed launches and internal buffers, moved allocations): " +
                         first_difference(expected, candidate)));
  out.g1.findings.push_back(
      {"host_code_edit", true,
       fmt::format("the original module with {} launches fused into {} and {} internal buffer(s) removed, nothing else",
                   edit.launches.size(), edit.kernel, edit.internal.size())});

  // What the fused launch passes and writes.
  std::set<std::string> region(facts.inputs.begin(), facts.inputs.end());
  region.insert(facts.outputs.begin(), facts.outputs.end());
  std::set<std::string> writes, reads, removed_writes, unused;
  accesses(fused, *fused_launches[0], *cf, writes, reads);
  for (size_t i : edit.launches)
    accesses(original.kernels[f->launches[i].kernel], f->launches[i], *f, removed_writes, unused);
  std::vector<std::string> problems;
  for (const std::string& s : reads)
    if (!region.count(s)) problems.push_back(fmt::format("it reads {}, which is none of the region's buffers", s));
  for (const std::string& s : writes)
    if (!std::count(facts.outputs.begin(), facts.outputs.end(), s))
      problems.push_back(fmt::format("it writes {}, which is not an output of the region", s));
  for (const std::string& s : facts.outputs)
    if (removed_writes.count(s) && !writes.count(s))
      problems.push_back(fmt::format("it does not write {}, which the removed launches wrote and is read after the "
                                     "region", s));
  if (!problems.empty())
    return done(fail("fused_launch", fmt::format("the fused launch of {}: {}", fused.name, fmt::join(problems, "; "))));
  out.g1.findings.push_back({"fused_launch", true,
                             fmt::format("passes only the region's buffers; writes {}", fmt::join(writes, ", "))});

  // The fused kernel's own source: the static checks, against itself (its stores are judged above).
  G1Result k = run_g1(fused, fused.source);
  for (Finding& x : k.findings) out.g1.findings.push_back(std::move(x));
  out.g1.passed = k.passed;
  out.edit = std::move(edit);
  return out;
}

}  // namespace kopt::verify
