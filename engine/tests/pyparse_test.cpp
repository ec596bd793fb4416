// Unit tests for the Python-subset parser: round trip, positions, errors and
// an Inductor-style module. The differential check against CPython lives in
// tests/python/test_parser_differential.py.
#include <gtest/gtest.h>

#include <string>

#include "artifact/pyparse/ast.h"

namespace kopt::py {
namespace {

std::unique_ptr<Module> ok(const std::string& src) {
  try {
    return parse(src, "t.py");
  } catch (const ParseError& e) {
    ADD_FAILURE() << "unexpected ParseError: " << e.what() << "\nsource:\n" << src;
    return nullptr;
  }
}

ParseError err(const std::string& src) {
  try {
    parse(src, "bad.py");
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ParseError for:\n" << src;
  return ParseError("", 0, 0, "");
}

const Node* body(const Module& m, size_t i) { return m.root()->list("body").at(i); }

TEST(PyParse, RoundTripSnippets) {
  const char* snippets[] = {
      "",
      "\n",
      "x = 1",
      "x = 1\n",
      "# only a comment",
      "x = 1  # trailing\n\n# end\n   \n",
      "\xEF\xBB\xBFimport os\n",
      "if a:\r\n    b = 1\r\nelse:\r\n    c = '''x\r\ny'''\r\n",
      "def f(a, /, b=1, *c, d, **e) -> int:\n\treturn a\n",
      "x = f'{a!r:>{w}} {b=}' r'\\n' u'x' \"\"\"doc\"\"\"\n",
      "b = rb'\\n' b'\\x00'\n",
      "y = [i for i in range(3) if i]; z = {k: v for k, v in d}\n",
      "a[1:2, ::3], b[:, None]\n",
      "@dec\nclass C(B, metaclass=M):\n  X: int = 1\n  pass\n",
      "x = (1 +\n  2) \\\n  + 3\n",
      "try:\n pass\nexcept E as e:\n raise X from e\nfinally:\n pass\n",
      "with (a as b, c):\n    pass\n",
      "lambda *a, **k: (yield)\n",
      "x = 0xFF + 1_000 + 1.5e-7 + 3j + 123456789012345678901234567890\n",
      "if x:\n    pass\n\n\n# trailing comment after dedent",
  };
  for (const char* s : snippets) {
    auto m = ok(s);
    ASSERT_TRUE(m) << s;
    EXPECT_EQ(m->print(), s);
    EXPECT_FALSE(dump(m->root()).empty());
  }
}

TEST(PyParse, Positions) {
  auto m = ok("x = foo(a, b=2)[:, None]\n@d\ndef g(): pass\n");
  ASSERT_TRUE(m);
  const Node* assign = body(*m, 0);
  EXPECT_EQ(assign->type, "Assign");
  const Node* sub = assign->child("value");
  ASSERT_TRUE(sub && sub->is("Subscript"));
  EXPECT_EQ(sub->begin.col, 4u);
  EXPECT_EQ(sub->end.col, 24u);
  EXPECT_EQ(m->text(sub), "foo(a, b=2)[:, None]");
  const Node* slice = sub->child("slice");
  ASSERT_TRUE(slice->is("Tuple"));
  EXPECT_EQ(m->text(slice), ":, None");
  EXPECT_EQ(slice->list("elts")[0]->type, "Slice");
  const Node* call = sub->child("value");
  const Node* kw = call->list("keywords").at(0);
  EXPECT_EQ(kw->ident("arg"), "b");
  EXPECT_EQ(m->text(kw), "b=2");
  const Node* fn = body(*m, 1);
  EXPECT_EQ(fn->type, "FunctionDef");
  EXPECT_EQ(fn->begin.line, 3u);  // the `def` line, not the decorator's (CPython >= 3.8)
  EXPECT_EQ(fn->begin.offset, m->source().find("def"));
  EXPECT_EQ(fn->child("args")->begin.line, 0u);  // arguments has no position in CPython
}

TEST(PyParse, ConstantsAndOps) {
  auto m = ok("a < b is not c not in d\nx = 0x10\ny: tl.constexpr = 8\nZ : int\n");
  ASSERT_TRUE(m);
  const Node* cmp = body(*m, 0)->child("value");
  ASSERT_EQ(cmp->list("ops").size(), 3u);
  EXPECT_EQ(cmp->list("ops")[1]->type, "IsNot");
  EXPECT_EQ(cmp->list("ops")[2]->type, "NotIn");
  const Node* hex = body(*m, 1)->child("value");
  EXPECT_EQ(hex->const_kind, ConstKind::Int);
  EXPECT_EQ(hex->value, "0x10");
  EXPECT_NE(dump(hex).find("value: int 16"), std::string::npos);
  const Node* ann = body(*m, 2);
  EXPECT_EQ(ann->type, "AnnAssign");
  EXPECT_EQ(ann->field("simple")->integer, 1);
  EXPECT_TRUE(ann->child("value"));
  EXPECT_FALSE(body(*m, 3)->child("value"));
}

TEST(PyParse, FloatRepr) {
  auto m = ok("(1e16, 1e15, 1e-5, 0.0001, 1e999, 2.5, 3j, 1_0.5)\n");
  ASSERT_TRUE(m);
  std::string d = dump(m->root());
  for (const char* want : {"float 1e+16", "float 1000000000000000.0", "float 1e-05", "float 0.0001", "float inf",
                           "float 2.5", "complex 3.0j", "float 10.5"})
    EXPECT_NE(d.find(want), std::string::npos) << want;
}

TEST(PyParse, Errors) {
  struct Case {
    const char* src;
    uint32_t line, col;
    const char* msg;
  };
  const Case cases[] = {
      {"def f(a):\n", 2, 0, "expected an indented block"},       // truncated file
      {"x = '''abc\n\n", 1, 4, "unterminated triple-quoted"},     // unterminated triple quote
      {"x = 'abc\n", 1, 4, "unterminated string literal"},
      {"if x:\n    a\n  b\n", 3, 2, "unindent does not match"},  // bad dedent
      {"x = 1\ny = '\xff'\n", 2, 5, "invalid UTF-8"},             // non-UTF-8 byte
      {"x = (1,\n", 1, 4, "'(' was never closed"},
      {"x = 1)\n", 1, 5, "unmatched ')'"},
      {"x = = 1\n", 1, 4, "expected expression, found '='"},
      {"x = b'a' 'b'\n", 1, 4, "cannot mix bytes and nonbytes"},
      {"f(a=1, b)\n", 1, 7, "positional argument follows keyword argument"},
      {"x = f'{}'\n", 1, 4, "empty expression"},
      {"1 = x\n", 1, 0, "cannot assign to Constant"},
  };
  for (const Case& c : cases) {
    ParseError e = err(c.src);
    EXPECT_EQ(e.file, "bad.py");
    EXPECT_EQ(e.line, c.line) << c.src << " -> " << e.what();
    EXPECT_EQ(e.col, c.col) << c.src << " -> " << e.what();
    EXPECT_NE(e.message.find(c.msg), std::string::npos) << e.what();
  }
}

TEST(PyParse, DeepNestingIsAnErrorNotACrash) {
  for (const std::string& src : {std::string(5000, '(') + std::string(5000, ')') + "\n",
                                 "x = " + std::string(100000, '-') + "1\n", "x = " + std::string(3000, '[') + "\n",
                                 "x = 1" + std::string(50000, '+') + "\n"}) {
    EXPECT_THROW(parse(src, "deep.py"), ParseError);
  }
  std::string chain = "x = a";
  for (int i = 0; i < 5000; ++i) chain += " + a";
  ParseError e = err(chain + "\n");
  EXPECT_NE(e.message.find("nesting too deep"), std::string::npos) << e.what();
  EXPECT_TRUE(ok("x = " + std::string(50, '(') + "1" + std::string(50, ')') + "\n"));
}

TEST(PyParse, InductorModule) {
  const std::string src = R"PY(# AOT ID: ['0_inference']
from torch._inductor.codegen.memory_planning import _align as align
import triton.language as tl
async_compile = AsyncCompile()

triton_poi_fused_0 = async_compile.triton('triton_poi_fused_0', '''
import triton
@triton.jit
def triton_poi_fused_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    R0_BLOCK: tl.constexpr = 1024
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    tmp3 = tl.where(xmask, tmp1, float("-inf"))
''', device_str='cuda')

async_compile.wait(globals())
del async_compile

class Runner:
    def call(self, args):
        arg0_1, = args
        args.clear()
        with torch.cuda._DeviceGuard(0):
            buf2 = empty_strided_cuda((128, 1024), (1024, 1), torch.float32)
            triton_poi_fused_0.run(arg0_1, buf2, 128, 1024, stream=stream0)
            del arg0_1
        return (buf2, )

if __name__ == "__main__":
    compiled_module_main('None', benchmark_compiled_module)
)PY";
  auto m = ok(src);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->print(), src);
  const Node* imp = body(*m, 0);
  EXPECT_EQ(imp->type, "ImportFrom");
  EXPECT_EQ(imp->ident("module"), "torch._inductor.codegen.memory_planning");
  EXPECT_EQ(imp->list("names")[0]->ident("asname"), "align");
  const Node* kernel = body(*m, 3)->child("value");
  ASSERT_TRUE(kernel->is("Call"));
  const Node* ksrc = kernel->list("args").at(1);
  EXPECT_EQ(ksrc->const_kind, ConstKind::Str);
  EXPECT_EQ(ksrc->value.substr(0, 14), "\nimport triton");
  EXPECT_EQ(kernel->list("keywords")[0]->ident("arg"), "device_str");
  // The kernel source is itself parseable Python.
  auto k = ok(ksrc->value);
  ASSERT_TRUE(k);
  const Node* fn = body(*k, 1);
  EXPECT_EQ(fn->ident("name"), "triton_poi_fused_0");
  const Node* xblock = fn->child("args")->list("args").at(3);
  EXPECT_EQ(k->text(xblock->child("annotation")), "tl.constexpr");
  EXPECT_EQ(body(*m, 5)->type, "Delete");
  const Node* call = body(*m, 6)->list("body")[0];
  EXPECT_EQ(call->ident("name"), "call");
  const Node* unpack = call->list("body")[0]->list("targets")[0];
  EXPECT_EQ(unpack->type, "Tuple");
  EXPECT_EQ(unpack->ident("ctx"), "Store");
  const Node* with = call->list("body")[2];
  EXPECT_EQ(with->type, "With");
  EXPECT_EQ(with->list("body").size(), 3u);
  EXPECT_EQ(body(*m, 7)->type, "If");
}

}  // namespace
}  // namespace kopt::py
