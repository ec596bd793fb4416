#include "agents/coder/fusion/prologue.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "agents/coder/fusion/pointwise.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"
#include "verify/outputs.h"
#include "verify/region_host.h"

namespace kopt::agents::fusion {

namespace {

constexpr const char* kPrefix = "fuse_";

}  // namespace

std::optional<stitch::RegionEdit> prologue(const Pair& p, std::string* why) {
  auto no = [&](std::string w) -> std::optional<stitch::RegionEdit> { return *why = std::move(w), std::nullopt; };
  const ir::Function& f = *p.f;
  const ir::Launch& lp = f.launches[p.producer];
  const ir::Launch& lc = f.launches[p.consumer];
  const ir::Kernel& kp = p.art->kernels[lp.kernel];
  const ir::Kernel& kc = p.art->kernels[lc.kernel];
  std::string pp = param_bound(lp, p.buffer), pc = param_bound(lc, p.buffer);
  if (pp.empty() || pc.empty()) return no(fmt::format("{} is not passed once to each kernel", p.buffer));
  // The fused launch runs where the producer ran: nothing may run between the two.
  if (p.consumer != p.producer + 1)
    return no(fmt::format("launch {} runs between the producer and the consumer", p.producer + 1));

  std::string w;
  auto pr = read_pointwise(kp, p.producer_source, &w);
  if (!pr) return no("the producer: " + w);
  if (pr->store.ptr != pp) return no(fmt::format("the producer stores through {}, not the buffer", pr->store.ptr));
  auto si = digit_affine(*pr, pr->store.index);
  if (!si || !is_x_index(*si, pr->digits)) return no("the producer does not store at its own x index");
  if (pr->xnumel != numel_of(f, p.buffer))
    return no(fmt::format("the producer writes {} elements, {} holds {}", pr->xnumel, p.buffer, numel_of(f, p.buffer)));
  if (pr->loads.size() != 1)
    return no(fmt::format("the producer reads {} buffers; the consumer's one parameter for {} can stand for one",
                          pr->loads.size(), p.buffer));
  const Pointwise::Load& in = pr->loads[0];
  std::string in_type = pointer_type(kp, in.at.ptr), buf_type = pointer_type(kp, pp);
  if (in_type.empty() || tl_dtype(buf_type).empty()) return no("the producer's pointer types are not known");
  std::string in_arg = arg_of(lp, in.at.ptr);
  // The consumer's parameter keeps its declared alignment: the input must have it too.
  if (divisible(kc, pc) && !divisible(kp, in.at.ptr))
    return no(fmt::format("{} is declared 16-byte aligned in the consumer, the producer's input {} is not", pc, in_arg));
  // The consumer must not write what the producer reads: the fused kernel would read it while writing it.
  {
    verify::PointerWrites wr = verify::pointer_writes(kc);
    size_t i = 0;
    for (const ir::KernelParam& q : kc.signature) {
      if (q.is_constexpr) continue;
      bool stored = std::count(wr.stored.begin(), wr.stored.end(), i++) > 0;
      if (stored && verify::storage_of(f, arg_of(lc, q.name)) == verify::storage_of(f, in_arg))
        return no(fmt::format("the consumer writes {}, which the producer reads", in_arg));
    }
  }

  ir::KernelSource ks;
  try {
    ks = ir::parse_kernel_source(p.consumer_source, kc.name, kc.name);
  } catch (const std::exception& e) {
    return no(e.what());
  }
  const py::Module& cm = *ks.module;
  const py::Node* load_stmt = nullptr;
  size_t uses = 0;
  py::walk(ks.entry, [&](const py::Node* n) {
    if (n->is("Name") && n->ident("id") == pc) ++uses;
    if (n->is("Assign") && n->list("targets").size() == 1 && n->list("targets")[0]->is("Name"))
      if (auto l = load_of(n->child("value")); l && l->ptr == pc) load_stmt = n;
  });
  if (!load_stmt || uses != 1)
    return no(fmt::format("the consumer uses {} other than in one load", pc));
  const py::Node* call = load_stmt->child("value");
  auto cl = load_of(call);
  std::string target(load_stmt->list("targets")[0]->ident("id"));
  std::string mask = cl->mask && !(cl->mask->is("Constant") && cl->mask->const_kind == py::ConstKind::None)
                         ? std::string(cm.text(cl->mask)) : "";
  const py::Node* other = keyword(call, "other");
  if (!other && call->list("args").size() > 2) other = call->list("args")[2];

  // The consumer's load, replaced by the producer's work at the consumer's index.
  const std::string& ps = p.producer_source;
  std::set<std::string> names = pr->locals;
  names.insert(pr->whole.begin(), pr->whole.end());
  names.insert("xindex");
  std::string ind(load_stmt->begin.col, ' ');
  std::string text = fmt::format("{}xindex = {}\n", kPrefix, cm.text(cl->index));
  for (const py::Node* s : pr->index_stmts) text += ind + prefixed(ps, s, names, kPrefix) + "\n";
  text += fmt::format("{}{}{} = tl.load({} + ({}){}{})\n", ind, kPrefix, in.target, pc,
                      prefixed(ps, in.at.index, names, kPrefix), mask.empty() ? "" : ", " + mask,
                      mask.empty() ? "" : ", other=0");
  for (const py::Node* b : pr->body) text += ind + prefixed(ps, b, names, kPrefix) + "\n";
  std::string value = fmt::format("({}).to({})", prefixed(ps, pr->store.value, names, kPrefix), tl_dtype(buf_type));
  if (!mask.empty() && other) value = fmt::format("tl.where({}, {}, {})", mask, value, cm.text(other));
  text += fmt::format("{}{} = {}", ind, target, value);

  std::string name = fused_name(kp, kc);
  std::vector<py::Edit> edits = {{load_stmt->begin.offset, load_stmt->end.offset, text}};
  std::string source = py::apply_edits(p.consumer_source, edits);
  // The parameter's declared type: the producer's input's.
  std::regex sig("'" + pc + "': '" + std::regex_replace(pointer_type(kc, pc), std::regex(R"(\*)"), R"(\*)") + "'");
  if (!std::regex_search(source, sig)) return no(fmt::format("the consumer's signature does not declare {}", pc));
  source = std::regex_replace(source, sig, "'" + pc + "': '" + in_type + "'");
  source = std::regex_replace(source, std::regex("\\b" + kc.name + "\\b"), name);
  if (kc.entry != kc.name)
    source = std::regex_replace(source, std::regex("\\bdef " + kc.entry + "\\("), "def " + name + "(");
  stitch::RegionEdit e;
  e.launches = {p.producer, p.consumer};
  e.internal = {p.buffer};
  e.kernel = name;
  e.source = source;
  e.args = args_with(kc, lc, pc, in_arg);
  return e;
}

}  // namespace kopt::agents::fusion
