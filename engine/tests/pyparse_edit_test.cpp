// Unit tests for splicing edits into a source (artifact/pyparse/edit.h): several edits in any
// order, edits that touch, insertions, and overlaps reported as internal errors.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "artifact/pyparse/edit.h"

namespace kopt::py {
namespace {

TEST(PyEdit, NoEditsKeepTheSource) { EXPECT_EQ(apply_edits("abc = 1\n", {}), "abc = 1\n"); }

TEST(PyEdit, SeveralEditsInAnyOrder) {
  const std::string src = "x = load(p)\ny = x + 1\n";
  // Offsets of the original text, whatever the lengths of the texts before them become.
  EXPECT_EQ(apply_edits(src, {{16, 17, "x2"}, {4, 8, "tl.load"}, {0, 1, "xx"}, {21, 21, "  # one"}}),
            "xx = tl.load(p)\ny = x2 + 1  # one\n");
}

TEST(PyEdit, AdjacentEdits) {
  // [0, 2) and [2, 4) touch; an insertion at 2 goes between them, before a replacement starting at 2.
  EXPECT_EQ(apply_edits("abcdef", {{2, 4, "CD"}, {0, 2, "AB"}, {2, 2, "|"}}), "AB|CDef");
  EXPECT_EQ(apply_edits("abcdef", {{4, 6, ""}, {0, 4, ""}}), "");
}

TEST(PyEdit, InsertionsAtOneOffsetKeepTheirOrder) {
  EXPECT_EQ(apply_edits("f(a)", {{3, 3, ", b"}, {3, 3, ", c"}}), "f(a, b, c)");
  EXPECT_EQ(apply_edits("ab", {{0, 0, "<"}, {2, 2, ">"}}), "<ab>");
}

TEST(PyEdit, OverlapIsAnError) {
  EXPECT_THROW(apply_edits("abcdef", {{0, 3, "x"}, {2, 4, "y"}}), std::logic_error);
  EXPECT_THROW(apply_edits("abcdef", {{1, 2, "x"}, {1, 2, "y"}}), std::logic_error);  // the same bytes twice
  EXPECT_THROW(apply_edits("abcdef", {{0, 6, "x"}, {3, 3, "y"}}), std::logic_error);  // an insertion inside
  try {
    apply_edits("abcdef", {{2, 4, "y"}, {0, 3, "x"}});
    ADD_FAILURE() << "expected an overlap error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("edit [2, 4) overlaps another edit ending at 3"), std::string::npos)
        << e.what();
  }
}

TEST(PyEdit, PastTheEndIsAnError) {
  EXPECT_THROW(apply_edits("abc", {{2, 4, "x"}}), std::logic_error);
  EXPECT_THROW(apply_edits("abc", {{2, 1, "x"}}), std::logic_error);
}

}  // namespace
}  // namespace kopt::py
