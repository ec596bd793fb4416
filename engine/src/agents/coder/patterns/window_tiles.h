// The program layout both window writers share (window.h: Inductor's combine kept, rows carried;
// window_separable.h: each row's taps combined first, then the rows): a lane owns V consecutive
// outputs of one output row, a tile row C lanes, a program G tile rows (G * C = 32 * warps: one
// lane per thread), and where a second window digit exists (the rows of a 2-D or 3-D pool) a
// program walks RH output rows. An input row is read with coalesced vector loads: the positions a
// lane's V outputs share as aligned [V * stride]-wide tiles (the neighbours' tiles, masked to the
// columns the window reaches, hit L1), split into columns in registers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agents/coder/patterns/window_match.h"
#include "artifact/ir.h"

namespace kopt::agents::patterns {

// Lines defining d<i> = the outer index's digit i for every digit from `from` on that an address or a
// window bound needs (`outer` counts whole planes of `span` outputs); each address term coef * d<i>
// is appended to *terms. Both writers' programs decompose their outer index so.
std::string outer_digits(const Window& w, size_t from, int64_t span, std::vector<std::string>* terms);

// The bounds of the input row a load reads, as terms to and: the output row (`oh` below the walked
// digit's radix) and each window coordinate from digit `from` on (the walked digit's at `oh`, the
// others' at d<i>). `walk` is the walked digit, or none (size_t(-1)).
std::vector<std::string> row_bounds(const Window& w, size_t from, size_t walk, const std::string& oh,
                                    const WindowLoad& l);

struct Tiling {
  int64_t v, c, g, rh;
  int warps;
  // A lane's V outputs C apart instead of consecutive: the C lanes of a tile row own consecutive output
  // columns, so each tap's load is coalesced across them (stride * 2-4 bytes apart), where consecutive
  // outputs put a lane's neighbour V * stride positions away (a 7-tap stride-3 bf16 pool: 24 bytes, six
  // 128-byte lines a warp's load). Rows are then read one load per tap (load_taps), no column tiles.
  bool interleave = false;
};

class Tiles {
 public:
  Tiles(const Window& w, const Tiling& t);

  // The entry's common head: the def line, `comment` (a `# ...` block), xnumel, and per lane its
  // unit, liveness, outer index, first output column, each outer digit d<i> and `rowbase` (the outer
  // digits' part of a row's address); when walking, `oh0`, the program's first output row.
  std::string head(const ir::Kernel& ker, const std::string& comment) const;

  // The output index and mask of output row `oh` ("" without a walk).
  std::string output(const std::string& oh, const std::string& ind) const;

  // Lines that read one input row into names[i] = the [G * C, V] values of row[i] for a lane's V
  // outputs. Every load of `row` has the same offsets along every digit but the innermost; the
  // row's coordinate along the walked digit is that offset plus stride * `oh`. `tag` names the
  // row's temporaries.
  std::string load_row(const std::vector<WindowLoad>& row, const std::vector<std::string>& names,
                       const std::string& tag, const std::string& oh, const std::string& ind) const;

  // Lines that read one input row into names[i] = the [G * C, V] values of row[i], one load per tap at the
  // lanes' own output columns (the interleaved layout; the same contract as load_row).
  std::string load_taps(const std::vector<WindowLoad>& row, const std::vector<std::string>& names,
                        const std::string& tag, const std::string& oh, const std::string& ind) const;

  bool walk = false;    // a second window digit with more than one output row
  int64_t span = 0;     // outputs per outer index (one output plane)
  int64_t vs = 0;       // input positions a lane's V outputs step over: V * stride
  int64_t tw = 0;       // a column tile's width, next_pow2(vs)
  int64_t colb = 0;     // column blocks per output row
  int64_t rowc = 0;     // row chunks per plane (RH output rows each)
  int64_t units = 0;    // (outer, row chunk, column block) units: G per program

 private:
  const Window& w_;
  Tiling t_;
};

}  // namespace kopt::agents::patterns
