// G1, the static gate (engine/src/verify/static/): each check on small hand-written
// candidates, every real corpus kernel as its own candidate (no false rejections),
// reformatted originals, and every hostile candidate in tests/error/ that expects G1.
#include <gtest/gtest.h>

#include "test_util.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "artifact/bundle.h"
#include "verify/static/g1.h"

namespace fs = std::filesystem;
using namespace kopt;
using verify::run_g1;

namespace {

using kopt::testing::read;

// A small pointwise kernel standing in for an Inductor original.
const char* kOriginal = R"(import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 1024},
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0), 'constants': {}},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'k', 'mutated_arg_names': []},
)
@triton.jit
def k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (xindex), xmask)
    tl.store(out_ptr0 + (xindex), tmp0, xmask)
)";

ir::Kernel small_kernel() {
  ir::Kernel k;
  k.name = k.entry = "k";
  k.kind = "pointwise";
  k.source = kOriginal;
  for (auto [name, dtype] : {std::pair{"in_ptr0", "*fp32"}, {"out_ptr0", "*fp32"}, {"xnumel", "i32"},
                             {"XBLOCK", "constexpr"}}) {
    ir::KernelParam p;
    p.name = name;
    p.dtype = dtype;
    p.is_constexpr = p.dtype == "constexpr";
    k.signature.push_back(p);
  }
  return k;
}

// The original with `from` replaced by `to` (must occur).
std::string edit(const std::string& from, const std::string& to, std::string src = kOriginal) {
  size_t at = src.find(from);
  EXPECT_NE(at, std::string::npos) << "edit: `" << from << "` not in the source";
  if (at != std::string::npos) src.replace(at, from.size(), to);
  return src;
}

// The original with `lines` appended to the entry's body.
std::string with_body(const std::string& lines) { return std::string(kOriginal) + lines; }

// Names of the failing checks, comma-separated ("" when G1 passes).
std::string failing(const verify::G1Result& r) {
  std::string out;
  for (const verify::Finding& f : r.findings)
    if (!f.passed) out += (out.empty() ? "" : ",") + f.check;
  return out;
}

std::string messages(const verify::G1Result& r) {
  std::string out;
  for (const verify::Finding& f : r.findings)
    if (!f.passed) out += f.check + ": " + f.message + "\n";
  return out;
}

// Expects G1 to reject `src` by exactly `check`, with a message containing `needle`.
void expect_rejected(const std::string& src, const std::string& check, const std::string& needle = "") {
  verify::G1Result r = run_g1(small_kernel(), src);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(failing(r), check) << messages(r);
  if (!needle.empty()) EXPECT_NE(messages(r).find(needle), std::string::npos) << messages(r);
}

void expect_passes(const std::string& src) {
  verify::G1Result r = run_g1(small_kernel(), src);
  EXPECT_TRUE(r.passed) << messages(r);
}

std::vector<std::string> corpus_bundles() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(KOPT_SOURCE_DIR) / "corpus"))
    if (fs::exists(e.path() / "meta.json")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(StaticG1, OriginalPassesWithEveryCheckReported) {
  verify::G1Result r = run_g1(small_kernel(), kOriginal);
  EXPECT_TRUE(r.passed) << messages(r);
  ASSERT_EQ(r.findings.size(), verify::g1_checks().size());
  for (size_t i = 0; i < r.findings.size(); ++i) EXPECT_EQ(r.findings[i].check, verify::g1_checks()[i].name);
}

TEST(StaticParses, SyntaxErrorStopsG1WithLineAndColumn) {
  verify::G1Result r = run_g1(small_kernel(), edit("xmask = xindex < xnumel", "xmask = (xindex < xnumel"));
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.findings.size(), 1u);  // nothing else can be checked
  EXPECT_EQ(r.findings[0].check, "parses");
  EXPECT_NE(r.findings[0].message.find("line "), std::string::npos) << r.findings[0].message;
}

TEST(StaticEntry, HelpersAllowed) {
  expect_passes(edit("@triton_heuristics", "@triton.jit\ndef helper(a, b):\n    return a + b\n\n@triton_heuristics"));
}

TEST(StaticEntry, Rejections) {
  expect_rejected(edit("def k(", "def k2("), "entry,signature,decorators,stores",
                  "no @triton.jit function named `k`");  // nothing else can be tied to the launch site either
  expect_rejected(std::string(kOriginal) + "\n@triton.jit\ndef k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
                                           "    pass\n",
                  "entry", "defined again");
  expect_rejected(std::string(kOriginal) + "\ndef host(x):\n    return x\n", "entry", "is not @triton.jit");
  expect_rejected(std::string(kOriginal) + "\nclass C:\n    pass\n", "entry", "class `C`");
}

TEST(StaticSignature, Rejections) {
  expect_rejected(edit("def k(in_ptr0, out_ptr0,", "def k(out_ptr0, in_ptr0,"), "signature", "parameter 1");
  expect_rejected(edit("def k(in_ptr0,", "def k(in_ptr,"), "signature", "`in_ptr`");
  expect_rejected(edit("xnumel, XBLOCK", "XBLOCK"), "signature", "missing");
  expect_rejected(edit("XBLOCK : tl.constexpr)", "XBLOCK : tl.constexpr, extra=1)"), "signature",
                  "not in the original");
  expect_rejected(edit("XBLOCK : tl.constexpr)", "XBLOCK)"), "signature", "`XBLOCK: tl.constexpr`");
  expect_rejected(edit("XBLOCK : tl.constexpr)", "XBLOCK : tl.constexpr = 128)"), "signature",
                  "`XBLOCK: tl.constexpr = 128`");
  expect_passes(edit("XBLOCK : tl.constexpr)", "XBLOCK: tl.constexpr)"));  // spacing is not a difference
}

TEST(StaticDecorators, AllowedForms) {
  // The heuristics decorator may be replaced by another known kind, or dropped.
  expect_passes(edit("triton_heuristics.pointwise(", "triton_heuristics.fixed_config(config={'XBLOCK': 128},"));
  std::string src = kOriginal;
  src.erase(src.find("@triton_heuristics"), src.find("@triton.jit") - src.find("@triton_heuristics"));
  expect_passes(src);
}

TEST(StaticDecorators, Rejections) {
  expect_rejected(edit("@triton.jit\n", "@triton.jit\n@functools.cache\n"), "decorators", "functools.cache");
  expect_rejected(edit("triton_heuristics.pointwise(", "triton_heuristics.unknown_kind("), "decorators",
                  "unknown_kind");
  expect_rejected(edit("@triton_heuristics", "@triton.jit\n@triton_heuristics.pointwise()\ndef h(a):\n    return a\n\n"
                                             "@triton_heuristics"),
                  "decorators", "only the entry");
}

TEST(StaticImports, Allowed) {
  expect_passes(edit("import triton\n",
                     "import triton\nimport math\nfrom triton.language.extra import libdevice as ld\n"
                     "from torch._inductor.runtime import triton_compat\n"));
}

TEST(StaticImports, Rejections) {
  for (const char* line : {"import os\n", "import numpy as np\n", "import torch\n", "import ctypes\n",
                           "import importlib\n", "import builtins\n", "from subprocess import run\n",
                           "import torch._inductor.runtime.hints\n", "from triton import runtime\n",
                           "from . import helpers\n", "from torch._inductor.runtime.triton_heuristics import os\n",
                           "from triton.language import *\n"}) {
    SCOPED_TRACE(line);
    expect_rejected(edit("import triton\n", std::string("import triton\n") + line), "imports", "line 2:");
  }
}

TEST(StaticHostCode, AllowedModuleConstants) {
  expect_passes(edit("triton_helpers.set_driver_to_gpu()\n", "triton_helpers.set_driver_to_gpu()\nSCALE = 0.5\n"
                                                             "BLOCK: tl.constexpr = 128\nNEG = -1\n"
                                                             "ONE = tl.constexpr(1)\n\"\"\"docstring\"\"\"\n"));
}

TEST(StaticHostCode, TheCpuDriverSwitchOfKernelsWrittenForCpuTensors) {
  // Inductor's Triton backend for CPU tensors (`capture --cpu-kernels triton`) heads each kernel with it.
  expect_passes(edit("triton_helpers.set_driver_to_gpu()\n", "triton_helpers.set_driver_to_cpu()\n"));
  expect_rejected(with_body("    triton_helpers.set_driver_to_cpu()\n"), "host_code", "belongs at module level");
}

TEST(StaticHostCode, Rejections) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with_body("    exec('1')\n"), "`exec`"},
      {with_body("    x = eval('1')\n"), "`eval`"},
      {with_body("    f = open('/etc/passwd')\n"), "`open`"},
      {with_body("    g = tmp0.__class__\n"), "`__class__`"},
      {with_body("    g = k.__globals__\n"), "`__globals__`"},
      {with_body("    b = __builtins__\n"), "`__builtins__`"},
      {with_body("    t = triton_helpers.torch.cuda.synchronize()\n"), "`.torch`"},
      {with_body("    global counter\n"), "`Global`"},
      {with_body("    f = lambda v: v\n"), "`Lambda`"},
      {with_body("    import math\n"), "`Import`"},
      {with_body("    tl.device_print('x', tmp0)\n"), "`.device_print`"},
      {with_body("    t = tl.extra.cuda.globaltimer()\n"), "`.globaltimer`"},
      {with_body("    d = triton.runtime.driver\n"), "`triton.runtime` is a host API"},
      {with_body("    def inner(v):\n        return v\n"), "`FunctionDef`"},
      {edit("triton_helpers.set_driver_to_gpu()\n", "print('hello')\n"), "module-level `Expr`"},
      {edit("triton_helpers.set_driver_to_gpu()\n", "X = len('abc')\n"), "module-level `Assign`"},
      {edit("triton_helpers.set_driver_to_gpu()\n", "for i in range(3):\n    pass\n"), "module-level `For`"},
      {edit("size_hints={'x': 1024}", "size_hints={'x': len('abcd')}"), "call of `len`"},
      {edit("filename=__file__", "filename=[c for c in 'x']"), "not `ListComp`"},
      {edit("size_hints={'x': 1024}", "size_hints={'x': 10**10**10}"), "not `BinOp`"},
  };
  for (const auto& [src, needle] : cases) {
    SCOPED_TRACE(needle);
    expect_rejected(src, "host_code", needle);
  }
}

TEST(StaticStores, AllowedPointerForms) {
  // A local pointer, a pointer advanced in a loop, a block pointer, tl.where between
  // written pointers, a helper that stores through its parameter, an atomic on an output.
  expect_passes(with_body("    p = out_ptr0 + xindex\n    p += 0\n    tl.store(p, tmp0, xmask)\n"));
  expect_passes(with_body("    bp = tl.make_block_ptr(base=out_ptr0, shape=[xnumel], strides=[1], offsets=[xoffset],"
                          " block_shape=[XBLOCK], order=[0])\n    tl.store(bp, tmp0)\n"));
  expect_passes(with_body("    tl.atomic_add(out_ptr0 + xindex, tmp0.to(out_ptr0.dtype.element_ty), xmask)\n"));
  expect_passes(with_body("    idx = tl.load(in_ptr0 + xindex, xmask).to(tl.int32)\n"
                          "    tl.store(out_ptr0 + idx, tmp0, xmask)\n"));  // indices loaded from an input
  expect_passes(edit("@triton_heuristics", "@triton.jit\ndef put(ptr, v, m):\n    tl.store(ptr, v, m)\n\n"
                                           "@triton_heuristics",
                     with_body("    put(out_ptr0 + xindex, tmp0, xmask)\n")));
}

TEST(StaticStores, Rejections) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with_body("    tl.store(in_ptr0 + xindex, tmp0, xmask)\n"), "`in_ptr0`, which the original only reads"},
      {with_body("    tl.atomic_add(in_ptr0 + xindex, tmp0, xmask)\n"), "tl.atomic_add writes through `in_ptr0`"},
      {with_body("    tl.atomic_cas(in_ptr0, 0.0, 1.0)\n"), "tl.atomic_cas writes through `in_ptr0`"},
      {with_body("    q = in_ptr0\n    q = q + xindex\n    tl.store(q, tmp0, xmask)\n"), "`in_ptr0`"},
      {with_body("    tl.store(tl.where(xmask, out_ptr0, in_ptr0) + xindex, tmp0)\n"), "`in_ptr0`"},
      {with_body("    tl.store(out_ptr0 + (in_ptr0 - out_ptr0) + xindex, tmp0)\n"), "`in_ptr0`"},
      {with_body("    bp = tl.make_block_ptr(base=in_ptr0, shape=[xnumel], strides=[1], offsets=[0],"
                 " block_shape=[XBLOCK], order=[0])\n    tl.store(bp, tmp0)\n"),
       "`in_ptr0`"},
      {with_body("    d = tl.make_tensor_descriptor(in_ptr0, shape=[xnumel], strides=[1], block_shape=[XBLOCK])\n"
                 "    d.store([0], tmp0)\n"),
       ".store writes through `in_ptr0`"},
      {with_body("    a = tl.load(in_ptr0).to(tl.pointer_type(tl.float32))\n    tl.store(a, tmp0)\n"),
       "cannot tell which parameter"},
      {with_body("    tl.store(out_ptr0 + xindex, in_ptr0.to(tl.int64, bitcast=True), xmask)\n"),
       "stores a value derived from pointer `in_ptr0`"},
      {with_body("    s = tl.store\n    s(in_ptr0, tmp0)\n"), "referenced without being called"},
      {with_body("    tl.inline_asm_elementwise('st.global.f32 [$1], $2;', '=r,l,f', [in_ptr0, tmp0], "
                 "dtype=tl.int32, is_pure=False, pack=1)\n"),
       "inline_asm"},
      {edit("@triton_heuristics", "@triton.jit\ndef put(ptr, v, m):\n    tl.store(ptr, v, m)\n\n@triton_heuristics",
            with_body("    put(in_ptr0 + xindex, tmp0, xmask)\n")),
       "tl.store (in helper `put`) writes through `in_ptr0`"},
      {with_body("    tl.core.store(in_ptr0 + xindex, tmp0, xmask)\n"), "tl.store writes through `in_ptr0`"},
      {with_body("    d = 0\n    if in_ptr0 > out_ptr0:\n        d = 1\n    tl.store(out_ptr0 + d, tmp0)\n"),
       "compares addresses (`in_ptr0`, `out_ptr0`)"},
      {edit("@triton_heuristics", "@triton.jit\ndef put(ptr, v, m):\n    tl.store(ptr, v, m)\n\n@triton_heuristics",
            with_body("    put(out_ptr0 + xindex, tmp0, xmask)\n    t = tl.reduce(tmp0, 0, put)\n")),
       "helper `put` is passed as a value"},
  };
  for (const auto& [src, needle] : cases) {
    SCOPED_TRACE(needle);
    expect_rejected(src, "stores", needle);
  }
}

// No false rejections: every real Inductor kernel passes G1 as its own candidate,
// and so does a reformatted copy (comments, blank lines, a renamed local).
TEST(StaticCorpus, EveryOriginalAndReformattedOriginalPasses) {
  size_t kernels = 0, passed = 0;
  const std::regex tmp0(R"(\btmp0\b)");
  for (const std::string& dir : corpus_bundles()) {
    auto b = ir::load_bundle(dir);
    for (const auto& g : b->graphs) {
      for (const ir::Kernel& k : g->kernels) {
        SCOPED_TRACE(dir + " " + k.name);
        ++kernels;
        verify::G1Result r = run_g1(k, k.source);
        EXPECT_TRUE(r.passed) << messages(r);
        std::string reformatted = "# a candidate that only reformats the original\n\n" +
                                  std::regex_replace(k.source, tmp0, "loaded_value0");
        size_t body = reformatted.find("):\n", reformatted.find("def " + k.entry + "("));
        ASSERT_NE(body, std::string::npos);
        reformatted.insert(body + 3, "\n    # kernelopt: same kernel\n\n");
        verify::G1Result rr = run_g1(k, reformatted);
        EXPECT_TRUE(rr.passed) << messages(rr);
        passed += r.passed && rr.passed;
      }
    }
  }
  EXPECT_GE(kernels, 50u);
  std::printf("[ G1 corpus ] %zu of %zu corpus kernels pass G1 (original and reformatted)\n", passed, kernels);
}

// tests/error/*.py whose first line says `# expect: G1 <check>; bundle: B; kernel: K`
// are rejected by exactly that check when offered as a replacement for kernel K. The
// `compiles` check runs in the worker (test_error_suite.py): those files must pass
// every static check, or they would not show that the compile step is needed.
TEST(StaticErrorCorpus, EveryG1CandidateIsRejectedByItsCheck) {
  const std::regex header(R"(^# expect: G1 (\w+); bundle: ([\w.\-]+); kernel: (\w+))");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(KOPT_SOURCE_DIR) / "tests" / "error")) {
    if (e.path().extension() != ".py") continue;
    std::string src = read(e.path().string());
    std::string first = src.substr(0, src.find('\n'));
    if (!first.starts_with("# expect: G1")) continue;
    SCOPED_TRACE(e.path().filename().string());
    std::smatch m;
    ASSERT_TRUE(std::regex_search(first, m, header)) << "bad header: " << first;
    auto b = ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "corpus" / m[2].str()).string());
    const ir::Kernel* k = nullptr;
    for (const auto& g : b->graphs)
      if (!k) k = g->find_kernel(m[3].str());
    ASSERT_NE(k, nullptr) << "no kernel " << m[3] << " in bundle " << m[2];
    verify::G1Result r = run_g1(*k, src);
    ++files;
    if (m[1].str() == "compiles") {
      EXPECT_TRUE(r.passed) << messages(r);
      continue;
    }
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(failing(r), m[1].str()) << messages(r);
  }
  EXPECT_GE(files, 11u);
}
