// The IR as JSON: `kernelopt inspect --json` and report.json share this shape
// (documented in docs/ir.md).
#include "artifact/ir.h"

namespace kopt::ir {

namespace {

json loc_json(const Span& s) { return {{"line", s.begin.line}, {"col", s.begin.col + 1}}; }

json arg_json(const Arg& a) {
  static const char* kinds[] = {"name", "int", "float", "bool", "none", "string", "expr"};
  json j = {{"kind", kinds[static_cast<int>(a.kind)]}, {"text", a.text}};
  if (a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Bool) j["value"] = a.ivalue;
  if (a.kind == Arg::Kind::Float) j["value"] = a.fvalue;
  if (!a.keyword.empty()) j["keyword"] = a.keyword;
  return j;
}

json args_json(const std::vector<Arg>& args) {
  json a = json::array();
  for (const Arg& x : args) a.push_back(arg_json(x));
  return a;
}

}  // namespace

json to_json(const Artifact& art) {
  json kernels = json::array();
  for (const Kernel& k : art.kernels) {
    json sig = json::array();
    for (const KernelParam& p : k.signature)
      sig.push_back({{"name", p.name}, {"dtype", p.dtype}, {"constexpr", p.is_constexpr}, {"constant", p.constant}});
    kernels.push_back({{"name", k.name},
                       {"var", k.var},
                       {"kind", k.kind},
                       {"entry", k.entry},
                       {"helpers", k.helpers},
                       {"launches", k.launch_count},
                       {"size_hints", k.size_hints},
                       {"signature", sig},
                       {"mutated_args", k.mutated_args},
                       {"aten_ops", k.aten_ops},
                       {"source_nodes", k.source_nodes},
                       {"decorator_args", k.decorator_args},
                       {"inductor_meta", k.inductor_meta},
                       {"triton_meta", k.triton_meta},
                       {"source_lines", std::count(k.source.begin(), k.source.end(), '\n')},
                       {"location", loc_json(k.decl)}});
  }
  json launches = json::array(), externs = json::array(), functions = json::array(), inputs = json::array();
  for (const Function& f : art.functions) {
    json steps = json::array();
    for (const Step& s : f.steps) {
      switch (s.kind) {
        case Step::Kind::Launch: {
          const Launch& l = f.launches[s.index];
          json bound = json::object();
          for (const auto& [p, v] : l.bound) bound[p] = v;
          json lj = {{"function", f.name}, {"kernel", art.kernels[l.kernel].name}, {"args", args_json(l.args)},
                     {"bound", bound}, {"extra", args_json(l.extra)}, {"stream", l.stream},
                     {"location", loc_json(l.span)}};
          launches.push_back(lj);
          steps.push_back({{"step", "launch"}, {"kernel", art.kernels[l.kernel].name}});
          break;
        }
        case Step::Kind::Extern: {
          const ExternCall& e = f.externs[s.index];
          externs.push_back({{"function", f.name}, {"op", e.op}, {"args", args_json(e.args)}, {"out", e.out},
                             {"location", loc_json(e.span)}});
          steps.push_back({{"step", "extern"}, {"op", e.op}});
          break;
        }
        case Step::Kind::Alloc: {
          const Alloc& a = f.allocs[s.index];
          steps.push_back({{"step", "alloc"}, {"buffer", a.buffer}, {"sizes", a.sizes}, {"strides", a.strides},
                           {"dtype", a.dtype}, {"allocator", a.device}});
          break;
        }
        case Step::Kind::View: {
          const View& v = f.views[s.index];
          steps.push_back({{"step", "view"}, {"buffer", v.buffer}, {"base", v.base}, {"sizes", v.sizes},
                           {"strides", v.strides}, {"offset", v.offset}});
          break;
        }
        case Step::Kind::Alias: steps.push_back({{"step", "alias"}, {"names", s.names}}); break;
        case Step::Kind::Del: steps.push_back({{"step", "del"}, {"names", s.names}}); break;
        case Step::Kind::Partition: steps.push_back({{"step", "partition"}, {"outputs", s.names}, {"text", s.text}}); break;
        case Step::Kind::Other: steps.push_back({{"step", "other"}, {"text", s.text}}); break;
      }
    }
    json fin = json::array();
    for (const Input& in : f.inputs) {
      json ij = {{"name", in.name}, {"index", in.index}, {"sizes", in.sizes}, {"strides", in.strides}};
      fin.push_back(ij);
      if (f.name == art.entry) inputs.push_back(ij);
    }
    functions.push_back({{"name", f.name}, {"inputs", fin}, {"steps", steps}, {"returns", f.returns}});
  }
  return {{"path", art.path},     {"entry", art.entry},     {"kernels", kernels}, {"launches", launches},
          {"extern_calls", externs}, {"inputs", inputs}, {"functions", functions}};
}

}  // namespace kopt::ir
