#include "agents/coder/templates/row_norm.h"

#include <functional>
#include <map>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/row_expr.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

constexpr int64_t kMaxRow = 32768;  // 64 fp32 registers per thread at 16 warps

// Writes the body that computes the read kernel's stores from rows held in registers.
class Emitter {
 public:
  Emitter(int64_t cols, bool wide) : cols_(cols), wide_(wide) {}

  std::string body;

  std::string value(const RowExprP& e) {
    auto it = names_.find(e->key);
    if (it != names_.end()) return it->second;
    std::string rhs = rhs_of(e);
    std::string var = fmt::format("t{}", names_.size());
    body += fmt::format("    {} = {}\n", var, rhs);
    names_[e->key] = var;
    return var;
  }

  std::string address(const RowAccess& a) const {
    std::string s = a.c ? std::to_string(a.c) : "";
    auto term = [&](int64_t coef, const std::string& var) {
      if (!coef) return;
      if (!s.empty()) s += " + ";
      s += coef == 1 ? var : fmt::format("{} * {}", coef, var);
    };
    term(a.r, "rr");
    term(a.x, wide_ ? "xw" : "xx");
    return fmt::format("{} + ({})", a.ptr, s.empty() ? "0" : s);
  }

  static std::string mask(int shape) {
    return shape == kTile ? "tm" : shape == kRow ? "xm" : shape == kCol ? "rm" : "None";
  }

 private:
  int64_t cols_;
  bool wide_;
  std::map<std::string, std::string> names_;

  std::string rhs_of(const RowExprP& e) {
    const std::string& op = e->op;
    auto a = [&](size_t i) { return value(e->args.at(i)); };
    if (op == "load") {
      // The row tile is used once from registers; weights and biases are shared by every row.
      std::string evict = e->shape == kTile ? ", eviction_policy='evict_first'"
                          : e->shape == kCol ? ", eviction_policy='evict_last'" : "";
      std::string m = mask(e->shape);
      if (m == "None") return fmt::format("tl.load({})", address(e->at));
      return fmt::format("tl.load({}, {}, other=0.0{})", address(e->at), m, evict);
    }
    if (op == "const") return e->text;
    if (op == "add") return fmt::format("{} + {}", a(0), a(1));
    if (op == "sub") return fmt::format("{} - {}", a(0), a(1));
    if (op == "mul") return fmt::format("{} * {}", a(0), a(1));
    if (op == "div") return fmt::format("{} / {}", a(0), a(1));
    if (op == "neg") return fmt::format("-{}", a(0));
    if (op == "to") return fmt::format("{}.to({})", a(0), e->text);
    if (op == "call") {
      std::string args = a(0);
      if (e->args.size() == 2) args += ", " + a(1);
      return fmt::format("{}({})", e->text, args);
    }
    if (op == "sum") return fmt::format("tl.sum(tl.where(tm, {}, 0.0), 1)[:, None]", a(0));
    // Welford's mean and M2 of a row that is in registers: two exact passes over them.
    if (op == "wmean") return fmt::format("tl.sum(tl.where(tm, {}, 0.0), 1)[:, None] / {}.0", a(0), cols_);
    if (op == "wm2") {
      auto m = std::make_shared<RowExpr>(*e);  // the same row's mean, keyed as the reader keys it
      m->op = "wmean";
      m->key = "wmean[](" + e->args[0]->key + ",)";
      std::string mean = value(m);
      std::string d = fmt::format("d{}", names_.size());
      body += fmt::format("    {} = tl.where(tm, {} - {}, 0.0)\n", d, a(0), mean);
      return fmt::format("tl.sum({0} * {0}, 1)[:, None]", d);
    }
    if (op == "wcount") return fmt::format("tl.full([1, 1], {}.0, tl.float32)", cols_);
    throw std::logic_error("row_norm: cannot emit " + op);
  }
};

}  // namespace

bool is_row_norm_family(const std::string& f) {
  return f == "layer_norm" || f == "rms_norm" || f == "vector_norm" || f == "batch_norm" || f == "group_norm";
}

std::vector<Candidate> row_norm(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  if (ker.kind != "reduction" && ker.kind != "persistent_reduction") return no("not a reduction kernel");
  std::vector<const ir::KernelParam*> runtime;
  bool has_r0_block = false, has_xblock = false;
  for (const ir::KernelParam& p : ker.signature) {
    if (p.is_constexpr) {
      has_r0_block = has_r0_block || p.name == "R0_BLOCK";
      has_xblock = has_xblock || p.name == "XBLOCK";
    } else {
      runtime.push_back(&p);
    }
  }
  size_t n = runtime.size();
  if (!has_xblock || n < 3 || runtime[n - 2]->name != "xnumel" || runtime[n - 1]->name != "r0_numel")
    return no("expected (pointers..., xnumel, r0_numel, XBLOCK) parameters");
  if (k.launches.empty()) return no("never launched");
  int64_t rows = 0, cols = -1;
  for (const json& l : k.launches) {
    const json& a = l["args"];
    if (a.size() != n || !a[n - 2].contains("value") || !a[n - 1].contains("value"))
      return no("unexpected launch arguments");
    int64_t c = a[n - 1]["value"];
    if (cols >= 0 && c != cols) return no("launches differ in row length");
    cols = c, rows = std::max<int64_t>(rows, a[n - 2]["value"]);
  }
  if (cols > kMaxRow) return no(fmt::format("rows of {} elements do not fit in registers", cols));
  std::string why;
  auto rk = read_row_kernel(ker, &why);
  if (!rk) return no(why);

  int64_t rb = next_pow2(cols);
  // 64-bit addresses when the largest one the kernel forms does not fit in int32.
  bool wide = false;
  auto track = [&](const RowAccess& a) {
    int64_t hi = a.c + a.r * (cols - 1) + a.x * (rows - 1);
    wide = wide || hi >= (int64_t{1} << 31) || a.c < 0 || a.r < 0 || a.x < 0;
  };
  std::function<void(const RowExprP&)> scan = [&](const RowExprP& e) {
    if (e->op == "load") track(e->at);
    for (const RowExprP& a : e->args) scan(a);
  };
  for (const RowStore& s : rk->stores) track(s.at), scan(s.value);

  Emitter em(cols, wide);
  std::string stores;
  for (const RowStore& s : rk->stores) {
    std::string v = em.value(s.value);
    stores += fmt::format("    tl.store({}, {}, {})\n", em.address(s.at), v, Emitter::mask(s.at.shape()));
  }
  std::string consts;
  for (const std::string& c : rk->body_consts) consts += "    " + c + "\n";
  std::string def = fmt::format(
      "def {name}({params}):\n"
      "    # kernelopt template row_norm ({fam}): XBLOCK rows per program held in registers, read once.\n"
      "{consts}"
      "    RB: tl.constexpr = {rb}\n"
      "    xx = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]\n"
      "{xw}"
      "    rr = tl.arange(0, RB)[None, :]\n"
      "    xm = xx < xnumel\n"
      "    rm = rr < r0_numel\n"
      "    tm = xm & rm\n"
      "{body}{stores}",
      fmt::arg("name", ker.entry), fmt::arg("params", entry_params(ker)), fmt::arg("fam", k.family),
      fmt::arg("consts", consts), fmt::arg("rb", rb), fmt::arg("xw", wide ? "    xw = xx.to(tl.int64)\n" : ""),
      fmt::arg("body", em.body), fmt::arg("stores", stores));
  std::string source = replace_entry(ker, def);

  // Launch configs: rows per program so a program holds 1K-16K elements (short rows: several
  // per program so each program moves enough bytes); warps so each thread holds 4-64 of them.
  // 32 warps for the longest rows: a 16384-element Welford row then takes 64 registers a thread
  // without spilling (ptxas, sm_90), where 16 warps take 128 and leave one program per SM.
  std::vector<Candidate> outc;
  for (int64_t xb = 1; xb <= 64 && xb <= next_pow2(rows); xb *= 2) {
    int64_t elems = xb * rb;
    if (elems > std::max<int64_t>(16384, rb)) break;
    if (elems < 1024 && xb * 2 <= next_pow2(rows)) continue;
    for (int w : {2, 4, 8, 16, 32}) {
      int64_t per_thread = elems / (32 * w);
      if (per_thread > 64 || per_thread < 4) continue;
      json c = {{"XBLOCK", xb}, {"num_warps", w}, {"num_stages", 1}};
      if (has_r0_block) c["R0_BLOCK"] = std::min<int64_t>(rb, 4096);
      outc.push_back(instance(ker, k.family, source, c, fmt::format("row_norm one-pass, {}", ir::describe_config(c))));
    }
  }
  if (outc.empty()) return no("no launch config fits the row length");
  return outc;
}

}  // namespace kopt::agents::templates
