// What a step of the job will cost, estimated before it starts, so that the job does not start a step it
// cannot finish inside its budget (docs/optimize.md, "The budget"). In CPU mode Triton's interpreter runs
// every kernel, and its time grows with the elements a kernel iterates: a model run is estimated from the
// bundle's sizes (each launch's literal *numel arguments) at a measured interpreter rate, until the baseline
// stage has timed a real run of this bundle. A cascade is estimated from that run, its kernel's share of it
// and how many runs the gates make, or from what an earlier cascade of the same kernel took, whichever is
// larger.
#pragma once

#include <optional>
#include <string>

#include "artifact/bundle.h"

namespace kopt::search {

// Elements one launch iterates: the product of its literal *numel arguments (xnumel, r0_numel, ...); 0 when
// none is literal (a kernel file's launcher computes them).
double launch_elements(const ir::Launch& l);
// Elements one run of `k` iterates (all its launches in the entry function), and one model run (every graph).
double kernel_elements(const ir::Artifact& a, const ir::Kernel& k);
double model_elements(const ir::Bundle& b);

// Triton's interpreter (triton 3.6, numpy), seconds per element iterated, measured on the CI machine's
// class of CPU (docs/cpu_mode.md, "Budgets": a split scan 0.54 us per element, a looped softmax 0.5 us per
// element and pass), rounded up so that an estimate errs towards not starting. A kernel that loops over its
// elements twice counts them once here: the baseline's timed run corrects it before any cascade.
inline constexpr double kInterpreterSecondsPerElement = 6e-7;
// The baseline stage in model runs: the module's run, the recorded run, the comparison with eager and
// loading (cumsum_long_large: 17.3 s for a 4.5 s run).
inline constexpr double kBaselineModelRuns = 4;
// The end-to-end gate in model runs (the stitched module, the baseline's, the comparison).
inline constexpr double kEndToEndModelRuns = 3;

// How far past its end a job may run, as a share of the budget: a cascade running over its estimate stops there
// (no G2 run starts later; the end-to-end gate's time kept back), and the end-to-end gate may run into it.
inline constexpr double kOverrun = 0.25;

// Runs of the kernel alone one cascade makes in the interpreter, with comparisons counted as runs: G2's
// recorded inputs (twice, plus the worker's first recording of the launches), the small config and each
// seed (the original, the candidate and their comparison each).
double cascade_kernel_runs(int seeds);

struct CostInputs {
  bool gpu = false;
  double model_run_s = 0;      // one run of the baseline module (the baseline stage's own); 0: not measured
  double model_elements = 0;   // model_elements(bundle)
  int seeds = 5;
  int reps = 50;               // G4's and the end-to-end gate's timed repetitions, as configured
};

// GPU: what a cascade spends per byte its kernel moves, beside the compile: G2's seeded draws and comparisons,
// G3's comparisons. First measured with G3's float64 model in every cascade (H200, session 24: 9.5 s of an
// 11.5 s cascade for a max pool moving 2.9 GB, 3.5 s per GB); G3 now runs it only when the answer needs it,
// and an RMS norm moving 10.4 GB spent 12 s outside a G3 that a corrupted host reference had sent to the float64
// model (session 28: 1.15 s per GB). At 3.5 s per GB that kernel was never tried within the default budget.
inline constexpr double kGpuCascadeSecondsPerByte = 2.0e-9;

// Seconds one cascade of a candidate for a kernel iterating `kernel_elements` (and moving `kernel_bytes`) will
// take: G2's kernel runs at the kernel's share of a model run plus G3's two model runs (GPU: G3's runs, a
// compile and the gates' work per byte, the timed repetitions being short), and never less than `earlier_s`,
// what a cascade of this kernel took before.
// `kernel_run_ms` (GPU, 0: not known): one run of the kernel's launches; on a kernel of a fifth of a second its runs
// are most of the cascade (G2's runs, G4's repetitions of the original and the candidate), which the per-byte
// figure does not see: a 192 ms exclusive cumsum's cascade took 35 s against an estimate of 17 s, started with
// 20 s left, and its 21x winner was left out for want of the end-to-end gate's 1.6 s (H100, session 37).
double cascade_seconds(const CostInputs& c, double kernel_elements, std::optional<double> earlier_s,
                       double kernel_bytes = 0, double kernel_run_ms = 0, int g4_reps = 0);

// Seconds the end-to-end gate will take: the search stops this much before the budget's end. On a GPU its timing
// (timing_reps of the baseline and the stitched model, the latter counted at the baseline's time) is in it.
double end_to_end_seconds(const CostInputs& c);

// GPU screening: a batch's candidates are compiled in one parallel wave (about this long, whatever the batch's
// size up to the pool's 16), then each is launched, like the baseline, (warm-up + timed + one first) times. A
// kernel that runs for a fifth of a second makes every candidate cost seconds: 16 candidates of a 192 ms scan
// took 27.5 s, past the point where the fastest of them (23x) still had time for its cascade (session 32).
inline constexpr double kScreenCompileSeconds = 1.0;
inline constexpr int kScreenExtraLaunches = 3;  // the worker's two warm-ups and one first launch per candidate

// Timed repetitions per screened candidate: the configured count, fewer for kernels whose launch takes longer
// than 100 ms (a second of launches is plenty to rank candidates that differ by the margin G4 demands), never
// under 3.
int screen_reps(int configured, double launch_ms);

// G4's timed repetitions: the configured count, fewer for kernels whose launch takes longer than 100 ms (two
// seconds of the original's launches, never under 10: at a fifth of a second a launch varies by well under the
// 3% G4 demands), so that a 192 ms kernel's G4 is 4 s rather than 12.
int timing_reps(int configured, double launch_ms);

// Seconds one screened source spends launching in a batch (the baseline's share, or a candidate's estimate).
double screen_launch_seconds(int reps, double launch_ms);

// Candidates the next screen batch may hold so that it ends within `left_s`: the batch's baseline launches are
// a fixed part with the compile wave, each candidate adds `per_candidate_s` (its launches, measured on an earlier
// batch of this kernel, else estimated from the launch time), never less than the baseline's own launches. At
// most `most`; `most` where candidates cost nothing but their compile (microsecond kernels). At least one before any batch was measured (a search that screens
// nothing finds nothing); none after, when not one more candidate ends within `left_s`.
size_t screen_batch_size(double left_s, double launch_ms, int reps, std::optional<double> per_candidate_s,
                         size_t most);

// "1.2 s", "95 s", "12 min": an estimate as a person reads it.
std::string seconds_text(double s);

}  // namespace kopt::search
