#include <regex>
// Reading the host side of an Inductor module: the statements of `call()` (or
// `Runner.call` / `partition_N`) in program order. Inductor nests them inside
// `with torch.cuda._DeviceGuard(i):` blocks, so the walk descends into compound
// statements and records everything in one flat, ordered step list.
#include <string>

#include "artifact/ir_internal.h"
#include "artifact/literal.h"

namespace kopt::ir {

namespace {

bool is_extern_target(std::string_view fn) {
  auto starts = [&](std::string_view p) { return fn.substr(0, p.size()) == p; };
  if (starts("torch.cuda.") || starts("torch._C.") || fn == "torch.ops.inductor._alloc_from_pool") return false;
  return starts("extern_kernels.") || starts("aten.") || starts("torch.ops.") || starts("torch.") ||
         starts("inductor_ops.") || starts("_quantized.");
}

bool is_allocator(std::string_view fn) {
  return fn == "empty_strided_cuda" || fn == "empty_strided_cpu" || fn == "empty_strided" ||
         fn == "torch.empty_strided" || fn == "empty_strided_p2p" || fn == "empty_strided_xpu";
}

std::vector<std::string> tuple_texts(const py::Module& m, const py::Node* n) {
  std::vector<std::string> out;
  if (!n) return out;
  if (n->is("Tuple") || n->is("List")) {
    for (const py::Node* e : n->list("elts")) out.emplace_back(m.text(e));
  } else {
    out.emplace_back(m.text(n));
  }
  return out;
}

std::vector<std::string> target_names(const py::Module& m, const py::Node* t) {
  std::vector<std::string> out;
  if (t->is("Tuple") || t->is("List")) {
    for (const py::Node* e : t->list("elts")) out.emplace_back(m.text(e));
  } else {
    out.emplace_back(m.text(t));
  }
  return out;
}

class HostReader {
 public:
  HostReader(const py::Module& m, const std::map<std::string, size_t, std::less<>>& kernels, Function& f)
      : m_(m), kernels_(kernels), f_(f) {}

  void block(const std::vector<py::Node*>& body) {
    for (const py::Node* st : body) {
      size_t first = f_.steps.size();
      statement(st);
      // A compound statement's steps are its body's, each with its own span already.
      if (!is_compound(st))
        for (size_t i = first; i < f_.steps.size(); ++i) f_.steps[i].span = {st->begin, st->end};
    }
  }

 private:
  static bool is_compound(const py::Node* st) {
    return st->is("With") || st->is("If") || st->is("For") || st->is("While") || st->is("Try");
  }

  void statement(const py::Node* st) {
    if (is_compound(st)) {
      block(st->list("body"));
      block(st->list("orelse"));
      block(st->list("finalbody"));
      return;
    }
    if (st->is("Return")) {
      f_.returns = tuple_texts(m_, st->child("value"));
      return;
    }
    if (st->is("Delete")) {
      Step s{Step::Kind::Del, 0, {}, {}, {}};
      for (const py::Node* t : st->list("targets")) s.names.emplace_back(m_.text(t));
      f_.steps.push_back(std::move(s));
      return;
    }
    if (st->is("Expr")) {
      const py::Node* v = st->child("value");
      if (v && v->is("Call") && call_statement(st, v, {})) return;
      other(st);
      return;
    }
    if (st->is("Assign") && st->list("targets").size() == 1) {
      const py::Node* target = st->list("targets")[0];
      const py::Node* v = st->child("value");
      if (v->is("Name") && v->ident("id") == "args") {
        size_t i = 0;
        for (const std::string& name : target_names(m_, target)) f_.inputs.push_back({name, i++, {}, {}});
        return;
      }
      if (target->is("Name") && v->is("Name")) {
        f_.steps.push_back({Step::Kind::Alias, 0, {std::string(m_.text(target)), std::string(m_.text(v))}, {}, {}});
        return;
      }
      if (v->is("Call") && call_statement(st, v, target_names(m_, target))) return;
    }
    other(st);
  }

  // Returns true when the call was recognised and recorded.
  bool call_statement(const py::Node* st, const py::Node* call, const std::vector<std::string>& assigned) {
    const py::Node* func = call->child("func");
    std::string fn = dotted_name(func);
    Span span{st->begin, st->end};
    const auto& args = call->list("args");

    if (fn == "assert_size_stride" && args.size() >= 3) {
      std::string name(m_.text(args[0]));
      bool input = false;
      for (Input& in : f_.inputs)
        if (in.name == name) in.sizes = tuple_texts(m_, args[1]), in.strides = tuple_texts(m_, args[2]), input = true;
      if (!input) f_.asserted[name] = {tuple_texts(m_, args[1]), tuple_texts(m_, args[2])};
      return true;
    }
    if (fn == "assert_alignment" || fn == "args.clear" || fn == "torch.cuda.set_device" ||
        fn == "get_raw_stream") {
      if (fn == "get_raw_stream") return false;  // keep `streamN = get_raw_stream(i)` as Other
      return true;
    }
    // Launch: `kernel_var.run(args..., stream=streamN)`.
    if (func && func->is("Attribute") && func->ident("attr") == "run") {
      auto it = kernels_.find(dotted_name(func->child("value")));
      if (it != kernels_.end()) {
        Launch l;
        l.kernel = it->second;
        l.span = span;
        l.args = call_args(call, "stream", l.stream);
        f_.steps.push_back({Step::Kind::Launch, f_.launches.size(), {}, {}, {}});
        f_.launches.push_back(std::move(l));
        return true;
      }
    }
    if (is_allocator(fn) && assigned.size() == 1 && args.size() >= 2) {
      Alloc a{assigned[0], tuple_texts(m_, args[0]), tuple_texts(m_, args[1]),
              args.size() > 2 ? std::string(m_.text(args[2])) : "", fn, span};
      for (const py::Node* kw : call->list("keywords"))
        if (kw->ident("arg") == "dtype") a.dtype = std::string(m_.text(kw->child("value")));
      f_.steps.push_back({Step::Kind::Alloc, f_.allocs.size(), {}, {}, {}});
      f_.allocs.push_back(std::move(a));
      return true;
    }
    if (fn == "reinterpret_tensor" && assigned.size() == 1 && args.size() >= 3) {
      View v{assigned[0], std::string(m_.text(args[0])), tuple_texts(m_, args[1]), tuple_texts(m_, args[2]),
             args.size() > 3 ? std::string(m_.text(args[3])) : "0", span};
      f_.steps.push_back({Step::Kind::View, f_.views.size(), {}, {}, {}});
      f_.views.push_back(std::move(v));
      return true;
    }
    // Graph partitions: `(buf1,) = self.partitions[0](partition0_args)` or `partition_0(args)`.
    if ((func && func->is("Subscript") && dotted_name(func->child("value")) == "self.partitions") ||
        fn.rfind("partition_", 0) == 0) {
      f_.steps.push_back({Step::Kind::Partition, 0, assigned, std::string(m_.text(st)), {}});
      return true;
    }
    if (is_extern_target(fn)) {
      ExternCall e;
      e.op = fn;
      e.span = span;
      e.args = call_args(call, "out", e.out);
      if (e.out.empty() && !assigned.empty()) {
        for (size_t i = 0; i < assigned.size(); ++i) e.out += (i ? ", " : "") + assigned[i];
      }
      f_.steps.push_back({Step::Kind::Extern, f_.externs.size(), {}, {}, {}});
      f_.externs.push_back(std::move(e));
      return true;
    }
    return false;
  }

  // Positional then keyword arguments of a call, except keyword `taken`, whose
  // source text goes to `taken_value` (a launch's stream=, an extern's out=).
  std::vector<Arg> call_args(const py::Node* call, std::string_view taken, std::string& taken_value) {
    std::vector<Arg> out;
    for (const py::Node* a : call->list("args")) out.push_back(read_arg(m_, a));
    for (const py::Node* kw : call->list("keywords")) {
      if (kw->ident("arg") == taken) {
        taken_value = std::string(m_.text(kw->child("value")));
        continue;
      }
      Arg a = read_arg(m_, kw->child("value"));
      a.keyword = std::string(kw->ident("arg"));
      out.push_back(std::move(a));
    }
    return out;
  }

  void other(const py::Node* st) { f_.steps.push_back({Step::Kind::Other, 0, {}, std::string(m_.text(st)), {}}); }

  const py::Module& m_;
  const std::map<std::string, size_t, std::less<>>& kernels_;
  Function& f_;
};

}  // namespace

Arg read_arg(const py::Module& m, const py::Node* n) {
  Arg a;
  a.text = std::string(m.text(n));
  if (n->is("Name")) {
    a.kind = Arg::Kind::Name;
  } else if (auto v = int_literal(n)) {
    a.kind = Arg::Kind::Int;
    a.ivalue = *v;
  } else if (n->is("Constant")) {
    switch (n->const_kind) {
      case py::ConstKind::Float: {
        json v = literal_to_json(m, n);
        a.kind = Arg::Kind::Float;
        a.fvalue = v.is_number() ? v.get<double>() : 0.0;  // `1e999` stays text: inf
        break;
      }
      case py::ConstKind::True: case py::ConstKind::False: a.kind = Arg::Kind::Bool, a.ivalue = n->const_kind == py::ConstKind::True; break;
      case py::ConstKind::None: a.kind = Arg::Kind::None; break;
      case py::ConstKind::Str: a.kind = Arg::Kind::String; break;
      default: break;
    }
  } else if (n->is("UnaryOp") && n->ident("op") == "USub" && n->child("operand")->is("Constant")) {
    json v = literal_to_json(m, n);
    if (v.is_number_float()) a.kind = Arg::Kind::Float, a.fvalue = v.get<double>();
  }
  return a;
}

Function read_host_function(const py::Module& m, const py::Node* def, std::string name,
                            const std::map<std::string, size_t, std::less<>>& kernel_by_var) {
  Function f;
  f.name = std::move(name);
  f.span = {def->begin, def->end};
  HostReader(m, kernel_by_var, f).block(def->list("body"));
  return f;
}

bool is_stream_lookup(const std::string& statement) {
  static const std::regex re(R"(^\s*\w+\s*=\s*get_raw_stream\()");
  return std::regex_search(statement, re);
}

}  // namespace kopt::ir
