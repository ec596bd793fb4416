// pattern:window (agents/coder/patterns/window.h): which captured kernels it recognizes as windowed
// loads, what it reads from them, and what it declines with which reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "agents/coder/builtin.h"
#include "agents/coder/patterns/patterns.h"
#include "agents/coder/patterns/window_match.h"
#include "agents/coder/patterns/window_separable.h"
#include "agents/coder/patterns/window_unroll.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "test_util.h"
#include "verify/static/g1.h"

namespace kopt {
namespace {

using kopt::testing::corpus;
using kopt::testing::tensor;
using kopt::testing::value;
using nlohmann::json;

agents::KernelProfile profile_of(const ir::Bundle& b, json args) {
  agents::KernelProfile p;
  p.kernel = &b.graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", std::move(args)}}};
  return p;
}

struct Pool {
  const char* bundle;
  std::vector<int64_t> in, out;
  size_t loads;
  bool walks;  // a second window digit: output rows walked, shared rows carried
};

const Pool kPools[] = {
    {"max_pool1d_dilated", {4, 8, 203}, {4, 8, 1, 101}, 4, false},
    {"avg_pool1d_padded", {4, 8, 301}, {4, 8, 1, 151}, 5, false},
    {"max_pool2d_rect_ceil", {2, 4, 37, 29}, {2, 4, 19, 28}, 6, true},
    {"max_pool3d_dilated", {2, 3, 13, 11, 15}, {2, 3, 6, 5, 7}, 8, true},
    {"max_pool2d", {4, 16, 32, 32}, {4, 16, 16, 16}, 9, true},
    {"avg_pool2d", {4, 16, 32, 32}, {4, 16, 32, 32}, 9, true},
    {"max_pool2d_large", {32, 64, 224, 224}, {32, 64, 112, 112}, 9, true},
    // Big windows Inductor wrote as a persistent reduction over their elements (window_unroll.h).
    {"max_pool2d_k5_s13", {2, 3, 23, 41}, {2, 3, 19, 13}, 25, true},
    {"max_pool3d_k3_s2", {2, 3, 9, 13, 11}, {2, 3, 5, 7, 6}, 27, true},
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

TEST(WindowPattern, ProposesForEveryPoolOfTheCorpusAndEachInstancePassesG1) {
  for (const Pool& pool : kPools) {
    SCOPED_TRACE(pool.bundle);
    auto b = corpus(pool.bundle);
    json args = {tensor(pool.in), tensor(pool.out), value(numel(pool.out))};
    if (b->graphs[0]->kernels.at(0).kind == "persistent_reduction") args.push_back(value(int64_t(pool.loads)));
    auto p = profile_of(*b, args);
    std::string why;
    auto w = agents::patterns::match_window(p, &why);
    ASSERT_TRUE(w) << why;
    EXPECT_EQ(w->loads.size(), pool.loads);
    auto cands = agents::patterns::instantiate("window", p, &why);
    ASSERT_FALSE(cands.empty()) << why;
    size_t separable = 0, interleaved_count = 0;
    for (const auto& c : cands) {
      EXPECT_EQ(c.origin, "pattern:window");
      EXPECT_EQ(c.source.find("tl.store(") != std::string::npos, true);
      // The separable form (each row's taps combined once, a ring of row values carried through a
      // loop) is proposed first wherever output rows are walked; Inductor's combine unrolled after it.
      if (c.description.rfind("window separable:", 0) == 0) {
        EXPECT_EQ(separable++, size_t(&c - cands.data())) << c.description;
        EXPECT_NE(c.source.find("for rr in range("), std::string::npos) << c.description;
        // Interleaved lanes read each tap with one load at their own output columns; column tiles split
        // aligned tiles of `cols` in registers.
        bool interleaved = c.description.find("interleaved") != std::string::npos ||
                           c.description.find(" apart,") != std::string::npos;
        interleaved_count += interleaved;
        EXPECT_EQ(c.source.find("cols = tl.arange(") == std::string::npos, interleaved) << c.description;
        EXPECT_EQ(c.source.find("* ow + ") != std::string::npos, interleaved) << c.description;
      } else {
        EXPECT_EQ(c.source.find("static_range") != std::string::npos, pool.walks) << c.description;
      }
      EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
    }
    EXPECT_EQ(separable > 0, pool.walks);
    EXPECT_LE(separable, 6u);  // a few tilings and launch configs: the search screens them all
    EXPECT_EQ(interleaved_count > 0, pool.walks);  // the interleaved layouts come first
    EXPECT_LE(cands.size() - separable, 8u);
  }
}

TEST(WindowPattern, ReadsStrideDilationPaddingAndExtentsFromTheKernel) {
  // max_pool1d k4 s2 p2 d2 over 203: offsets -2, 0, 2, 4 along the contiguous digit, stride 2.
  auto b = corpus("max_pool1d_dilated");
  auto p = profile_of(*b, {tensor({4, 8, 203}), tensor({4, 8, 1, 101}), value(3232)});
  std::string why;
  auto w = agents::patterns::match_window(p, &why);
  ASSERT_TRUE(w) << why;
  ASSERT_EQ(w->digits.size(), 2u);
  EXPECT_TRUE(w->digits[0].window);
  EXPECT_EQ(w->digits[0].stride, 2);
  EXPECT_EQ(w->digits[0].extent, 203);
  EXPECT_EQ(w->digits[0].radix, 101);
  EXPECT_FALSE(w->digits[1].window);
  std::vector<int64_t> offs;
  for (const auto& l : w->loads) offs.push_back(l.offset[0]);
  EXPECT_EQ(offs, (std::vector<int64_t>{-2, 0, 2, 4}));
  EXPECT_EQ(w->other, "float(\"-inf\")");
  // Four outputs per lane at stride 2 read 8-wide tiles: the lane's own, and of its neighbours'
  // only the columns the window reaches (one to the left, three to the right).
  auto cands = agents::patterns::instantiate("window", p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  const std::string& src = cands.front().source;
  EXPECT_NE(src.find("& (cols >= 6) & (cols <= 6)"), std::string::npos) << src;
  EXPECT_NE(src.find("& (cols >= 0) & (cols <= 2)"), std::string::npos) << src;
  // Inductor's combine is kept as written.
  EXPECT_NE(src.find("tmp32 = triton_helpers.maximum(tmp25, tmp31)"), std::string::npos);

  // The (3, 2) window, stride (2, 1), padding (1, 0), ceil_mode: the row digit's extent 37 bounds the
  // partial last window, and the one row two consecutive output rows share is carried.
  auto r = corpus("max_pool2d_rect_ceil");
  auto q = profile_of(*r, {tensor({2, 4, 37, 29}), tensor({2, 4, 19, 28}), value(4256)});
  auto rw = agents::patterns::match_window(q, &why);
  ASSERT_TRUE(rw) << why;
  EXPECT_EQ(rw->digits[1].stride, 2);
  EXPECT_EQ(rw->digits[1].extent, 37);
  EXPECT_EQ(rw->digits[0].stride, 1);
  auto rc = agents::patterns::instantiate("window", q, &why);
  auto kept = std::find_if(rc.begin(), rc.end(), [](const auto& c) { return c.description.rfind("window:", 0) == 0; });
  ASSERT_NE(kept, rc.end()) << why;
  EXPECT_NE(kept->source.find("win_0 = c0"), std::string::npos) << kept->source;
  EXPECT_NE(kept->source.find("c0 = win_4"), std::string::npos);
}

TEST(WindowPattern, DeclinesWithTheReason) {
  std::string why;
  auto g = corpus("gelu_scale");
  agents::KernelProfile p;
  p.kernel = &g->graphs[0]->kernels.at(0);
  json args = json::array();
  for (const auto& prm : p.kernel->signature)
    if (!prm.is_constexpr) args.push_back(prm.name == "xnumel" ? value(1024) : tensor({1024}));
  p.launches = {{{"args", args}}};
  EXPECT_TRUE(agents::patterns::instantiate("window", p, &why).empty());
  EXPECT_NE(why.find("loads from in_ptr0 and in_ptr1: not one windowed input"), std::string::npos) << why;

  auto s = corpus("softmax_lastdim");
  p.kernel = &s->graphs[0]->kernels.at(0);
  EXPECT_TRUE(agents::patterns::instantiate("window", p, &why).empty());
  EXPECT_EQ(why, "a reduction that is not a window's elements combined: a statement after the reduction walks "
                 "the r index");  // softmax: its second reduction reads the first's result per r

  // Channels-last: the innermost digit is the channel, which the window does not move along; the
  // window moves along the next two. Here Inductor merged the batch into the row digit (x2 = xindex //
  // 176 walks 20 = 2 x 10 rows), which no window reader can take apart.
  auto cl = corpus("avg_pool2d_channels_last");
  json in = tensor({2, 16, 20, 22}), out = tensor({2, 16, 10, 11});
  in["stride"] = {7040, 1, 352, 16};
  out["stride"] = {1760, 1, 176, 16};
  auto q = profile_of(*cl, {in, out, value(3520)});
  EXPECT_TRUE(agents::patterns::instantiate("window", q, &why).empty());
  EXPECT_NE(why.find("merged over two output dimensions"), std::string::npos) << why;

  // A mask that is not the bounds of the load's window coordinates.
  auto b = corpus("max_pool1d_dilated");
  b->graphs[0]->kernels.at(0).source =
      testing::replaced(b->graphs[0]->kernels.at(0).source, "tmp8 = tmp5 < tmp7", "tmp8 = tmp5 < tmp2");
  auto m = profile_of(*b, {tensor({4, 8, 203}), tensor({4, 8, 1, 101}), value(3232)});
  EXPECT_TRUE(agents::patterns::instantiate("window", m, &why).empty());
  EXPECT_NE(why.find("tmp11"), std::string::npos) << why;
}

TEST(WindowPattern, ReadsAWindowCoordinateCastToTheIndexType) {
  // Inductor's Triton backend for CPU tensors casts coordinates: `tmp5 = ((-2) + 2*x0).to(tl.int32)`.
  auto b = corpus("max_pool1d_dilated");
  std::string& src = b->graphs[0]->kernels.at(0).source;
  src = testing::replaced(src, "tmp5 = (-2) + 2*x0", "tmp5 = ((-2) + 2*x0).to(tl.int32)");
  auto p = profile_of(*b, {tensor({4, 8, 203}), tensor({4, 8, 1, 101}), value(3232)});
  std::string why;
  auto w = agents::patterns::match_window(p, &why);
  ASSERT_TRUE(w) << why;
  EXPECT_EQ(w->loads.front().offset[0], -2);
  // A cast to a float type is no index: the mask is then no bound of a coordinate.
  src = testing::replaced(src, "tmp5 = ((-2) + 2*x0).to(tl.int32)", "tmp5 = ((-2) + 2*x0).to(tl.float32)");
  EXPECT_FALSE(agents::patterns::match_window(p, &why));
}

TEST(WindowPattern, KeepsAConversionOfTheLoadAndDeclinesAStoreMaskedOtherwise) {
  // 16-bit inputs: Inductor converts each load at once (`tl.load(...).to(tl.float32)`).
  auto b = corpus("max_pool1d_dilated");
  std::string& src = b->graphs[0]->kernels.at(0).source;
  src = testing::replaced(src, "other=float(\"-inf\"))\n    tmp12", "other=float(\"-inf\")).to(tl.float32)\n    tmp12");
  auto p = profile_of(*b, {tensor({4, 8, 203}), tensor({4, 8, 1, 101}), value(3232)});
  std::string why;
  auto w = agents::patterns::match_window(p, &why);
  ASSERT_TRUE(w) << why;
  EXPECT_NE(std::find(w->body.begin(), w->body.end(), "tmp11 = win_0.to(tl.float32)"), w->body.end());
  // A store under another mask than the output's bounds is not the pointwise form the tiles keep.
  src = testing::replaced(src, "tl.store(out_ptr0 + (x2), tmp32, xmask)", "tl.store(out_ptr0 + (x2), tmp32, tmp10)");
  EXPECT_TRUE(agents::patterns::instantiate("window", p, &why).empty());
  EXPECT_NE(why.find("a store not written"), std::string::npos) << why;
}

TEST(WindowPattern, ReadsTheCombineOfASeparableWindowAndDeclinesWhatIsNot) {
  namespace pt = agents::patterns;
  std::string why;
  // A 3x3 max pool (stride 2, padding 1): Inductor's chain of maximum() over the 9 values.
  auto b = corpus("max_pool2d");
  auto p = profile_of(*b, {tensor({4, 16, 32, 32}), tensor({4, 16, 16, 16}), value(16384)});
  auto w = pt::match_window(p, &why);
  ASSERT_TRUE(w) << why;
  auto c = pt::read_combine(*w, &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->op, "max");
  EXPECT_EQ(c->root, "tmp51");
  EXPECT_EQ(c->to, "");
  // The window values and the combine tree are gone; the store reads the separable value.
  EXPECT_NE(std::find(c->body.begin(), c->body.end(), "tmp51 = win_sep"), c->body.end());
  for (const std::string& l : c->body) {
    EXPECT_EQ(l.find("maximum"), std::string::npos) << l;
    EXPECT_EQ(l.find("win_0"), std::string::npos) << l;
  }
  // Rows 2 apart, 3 of them: a ring of 3 rows, one carried (the row two windows share), two read anew.
  auto sep = pt::separable(p, *w, &why);
  ASSERT_FALSE(sep.empty()) << why;
  EXPECT_NE(sep[0].source.find("a ring of\n    # 1 row values carried through 16 output rows, 2 read anew"),
            std::string::npos) << sep[0].source;

  // An average pool: a sum, then Inductor's divisor statements kept.
  auto a = corpus("avg_pool2d");
  auto q = profile_of(*a, {tensor({4, 16, 32, 32}), tensor({4, 16, 32, 32}), value(65536)});
  auto aw = pt::match_window(q, &why);
  ASSERT_TRUE(aw) << why;
  auto ac = pt::read_combine(*aw, &why);
  ASSERT_TRUE(ac) << why;
  EXPECT_EQ(ac->op, "sum");
  EXPECT_NE(std::find(ac->body.begin(), ac->body.end(), "tmp53 = (tmp51 / tmp52)"), ac->body.end());

  // A big window Inductor wrote as a reduction, 16-bit: each value converted before the max.
  auto r = ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/pool_as_reduction").string());
  auto big = profile_of(*r, {tensor({32, 41, 821, 1024}), tensor({32, 41, 813, 340}),
                             value(int64_t{32} * 41 * 813 * 340), value(25)});
  auto bw = pt::match_window(big, &why);
  ASSERT_TRUE(bw) << why;
  auto bc = pt::read_combine(*bw, &why);
  ASSERT_TRUE(bc) << why;
  EXPECT_EQ(bc->op, "max");
  EXPECT_EQ(bc->to, ".to(tl.float32)");

  // What is not one combine of every value, once each, is declined with the reason.
  pt::Window twice = *w;
  twice.body.insert(twice.body.end() - 1, "tmp99 = tmp11 > tmp17");  // an argmax compares values again
  EXPECT_FALSE(pt::read_combine(twice, &why));
  EXPECT_NE(why.find("is read besides its combine"), std::string::npos) << why;
  pt::Window mixed = *w;
  for (std::string& l : mixed.body)
    if (l == "tmp25 = triton_helpers.maximum(tmp18, tmp24)") l = "tmp25 = triton_helpers.minimum(tmp18, tmp24)";
  EXPECT_FALSE(pt::read_combine(mixed, &why));
  EXPECT_NE(why.find("combined by max and min"), std::string::npos) << why;
  pt::Window apart = *w;
  apart.digits[1].stride = 4;  // rows 4 apart per output row: no row two windows share
  EXPECT_TRUE(pt::separable(p, apart, &why).empty());
  EXPECT_NE(why.find("share no input row"), std::string::npos) << why;
  pt::Window skewed = *w;
  skewed.loads[4].offset[0] += 7;  // one value off the grid of taps and rows
  EXPECT_TRUE(pt::separable(p, skewed, &why).empty());
  EXPECT_NE(why.find("not a product of offsets"), std::string::npos) << why;
  auto one = corpus("max_pool1d_dilated");
  auto o = profile_of(*one, {tensor({4, 8, 203}), tensor({4, 8, 1, 101}), value(3232)});
  auto ow = pt::match_window(o, &why);
  ASSERT_TRUE(ow) << why;
  EXPECT_TRUE(pt::separable(o, *ow, &why).empty());
  EXPECT_NE(why.find("no second window digit"), std::string::npos) << why;
}

TEST(WindowPattern, TheSeparableFormOfAChannelsLastPool) {
  // A 3x3 max pool, stride (1, 2), padding 1, dilation (2, 1), over a 2x13x19x23 channels-last input,
  // captured with --cpu-kernels triton: the channel is the innermost digit, the window moves along the
  // next two. Lanes own channels; taps along the columns; a ring of the 5 rows the dilated window spans.
  namespace pt = agents::patterns;
  auto b = ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/max_pool2d_channels_last_cpu").string());
  json in = tensor({2, 13, 19, 23}), out = tensor({2, 13, 17, 12});
  in["stride"] = {5681, 1, 299, 13};
  out["stride"] = {2652, 1, 156, 13};
  auto p = profile_of(*b, {in, out, value(5304)});
  std::string why;
  auto w = pt::match_window(p, &why);
  ASSERT_TRUE(w) << why;
  EXPECT_TRUE(w->channels_inner);
  EXPECT_FALSE(w->digits[0].window);
  EXPECT_TRUE(w->digits[1].window && w->digits[2].window);
  EXPECT_EQ(w->digits[1].stride, 2);
  EXPECT_EQ(w->digits[2].stride, 1);
  auto cands = pt::instantiate("window", p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& c : cands) {
    EXPECT_EQ(c.description.rfind("window separable, channels last: max of 3 taps a row, then 3 rows", 0), 0u)
        << c.description;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // Rows 2 apart: positions 0-4 of the ring, 4 carried (1 and 3 for the rows after), one read anew.
  EXPECT_NE(cands[0].source.find("a ring of\n    # 4 row values carried through 16 output rows, 1 read anew"),
            std::string::npos) << cands[0].source;
  EXPECT_NE(cands[0].source.find("xindex = outer * 2652 + oh * 156 + ow * 13 + ch"), std::string::npos);
}

TEST(WindowPattern, ReadsABigWindowInductorWroteAsAReduction) {
  // A 5x5 max pool, stride (1, 3), padding (0, 1), dilation 2, over 32x41x821x1024 bf16, captured on
  // the H200: Inductor wrote a persistent reduction over the 25 window elements. Written out per r it
  // is the pointwise form: 25 loads, offsets 2 apart (the dilation) along both window digits.
  auto b = ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/pool_as_reduction").string());
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  ASSERT_EQ(p.kernel->kind, "persistent_reduction");
  const int64_t outputs = int64_t{32} * 41 * 813 * 340;
  p.launches = {{{"args", {tensor({32, 41, 821, 1024}), tensor({32, 41, 813, 340}), value(outputs), value(25)}}}};
  std::string why;
  auto u = agents::patterns::unroll_reduction(*p.kernel, &why);
  ASSERT_TRUE(u) << why;
  EXPECT_EQ(u->r, 25);
  EXPECT_NE(u->source.find("tmp16 = tmp16_acc24.to(tl.float32)"), std::string::npos) << u->source;
  auto w = agents::patterns::match_window(p, &why);
  ASSERT_TRUE(w) << why;
  ASSERT_EQ(w->loads.size(), 25u);
  EXPECT_EQ(w->other, "float(\"-inf\")");
  ASSERT_GE(w->digits.size(), 2u);
  EXPECT_TRUE(w->digits[0].window && w->digits[1].window);
  EXPECT_EQ(w->digits[0].stride, 3);
  EXPECT_EQ(w->digits[1].stride, 1);
  // Load 7 is r = 7: row 7 // 5 = 1, column 7 % 5 = 2; with dilation 2 and padding (0, 1): offsets
  // (2 * 2 - 1, 2 * 1) along (columns, rows).
  EXPECT_EQ(w->loads[7].offset[0], 3);
  EXPECT_EQ(w->loads[7].offset[1], 2);
  auto cands = agents::patterns::instantiate("window", p, &why);
  // Under dilation 2 no row of one output row's window is another's: only the separable form
  // reuses rows (a ring of the 9 rows the window spans, 8 carried, one read per output row).
  ASSERT_GE(cands.size(), 3u) << why;
  std::vector<const agents::Candidate*> separable, unrolled;
  for (const auto& c : cands) {
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
    (c.description.rfind("window separable:", 0) == 0 ? separable : unrolled).push_back(&c);
  }
  ASSERT_FALSE(separable.empty());
  EXPECT_NE(separable[0]->source.find("a ring of\n    # 8 row values carried through 16 output rows, 1 read anew"),
            std::string::npos)
      << separable[0]->source;
  ASSERT_EQ(unrolled.size(), 2u);  // one tiling (4 outputs a lane, 4 rows walked) at 4 and 8 warps
  for (const auto* c : unrolled) EXPECT_TRUE(c->screen_last);
  for (const auto* c : separable) EXPECT_FALSE(c->screen_last);
  // The coder screens the unrolled ones after every launch config: they compile for seconds and
  // measured behind the best config on the H200, which they would otherwise push out of the
  // screening budget. The separable ones (a loop, quick to compile) lead, in turn with the configs.
  p.family = profile::family(*p.kernel);
  auto all = agents::BuiltinCoder().propose(p, agents::Plan{{"pattern:window", "config"}, {}, ""});
  ASSERT_GT(all.size(), separable.size() + 2);
  EXPECT_EQ(all[0].description, separable[0]->description);
  EXPECT_EQ(all[1].origin, "config");
  EXPECT_EQ(all[all.size() - 1].description, unrolled[1]->description);
  EXPECT_EQ(all[all.size() - 2].description, unrolled[0]->description);
  size_t seen = 0;
  for (size_t i = 0; i + 2 < all.size(); ++i)
    if (all[i].origin == "pattern:window") EXPECT_EQ(all[i].description, separable[seen++]->description) << i;
  EXPECT_EQ(seen, separable.size());
}

}  // namespace
}  // namespace kopt
