// kernelopt: the engine's command line. Each subcommand lives in cli/; every flag's value is checked when
// parsed (cli/flags.h), and errors a user can fix are one line on stderr, `kernelopt: error: <what>; <the
// fix>`, with exit code 2. The same flag means the same on every subcommand: -o/--out, --gpus, -q/--quiet,
// -v/--verbose, --json, --device, --timeout.
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "artifact/pyparse/ast.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/gate_flags.h"
#include "util/crash.h"
#include "util/error.h"
#include "worker/supervisor.h"

namespace {

using kopt::cli::Least;

const std::vector<std::string> kDevices = {"cuda", "cpu"};
const std::vector<std::string> kDtypes = {"float32", "bfloat16", "float16"};
const std::string kDbHelp = "results database (default $KERNELOPT_DB or ~/.cache/kernelopt/results.db)";

int error_line(const std::string& what) {
  std::cerr << "kernelopt: error: " << what << "\n";
  return 2;
}

// --gpus for a command that starts one worker, with --gpu, its old spelling, kept hidden.
void add_one_gpu(CLI::App& sub, std::string& gpu) {
  sub.add_option("--gpus", gpu, "GPU index for the worker (one)")->capture_default_str()->check(
      kopt::cli::gpu_list("--gpus", true));
  kopt::cli::add_hidden_alias(sub, "--gpu", gpu)->check(kopt::cli::gpu_list("--gpus", true));
}

void add_device(CLI::App& sub, std::string& device, const std::string& description) {
  sub.add_option("--device", device, description)->capture_default_str()->check(kopt::cli::one_of("--device", kDevices));
}

}  // namespace

int main(int argc, char** argv) {
  kopt::util::install_crash_handler();
  CLI::App app{"kernelopt: makes torch.compile'd models faster by optimizing Inductor's Triton kernels"};
  app.name("kernelopt");  // the usage lines' name, whatever path the binary was run by
  app.set_version_flag("--version", std::string("kernelopt ") + KOPT_VERSION);
  app.require_subcommand(1);

  kopt::pipeline::CaptureOptions cap;
  auto* c = app.add_subcommand("capture", "compile a problem with torch.compile and write an artifact bundle (GPU)");
  c->add_option("problem", cap.problem, "problem file (Model, get_inputs, get_init_inputs)")->required();
  c->add_option("--out,-o", cap.out, "bundle directory to write")->required();
  c->add_option("--mode", cap.mode, "torch.compile mode: default | max-autotune-no-cudagraphs")->capture_default_str();
  kopt::cli::add_number(*c, "--seed", cap.seed, "seed for weights and inputs", Least::zero);
  add_device(*c, cap.device, "cuda | cpu (cpu: Inductor writes C++ kernels, which kernelopt cannot optimize, unless "
                             "--cpu-kernels triton; Triton or Helion kernel files keep their kernels)");
  c->add_option("--cpu-kernels", cap.cpu_kernels,
                "with --device cpu: cpp (Inductor's CPU backend; inspect and stitch only) | triton (Inductor's Triton "
                "kernels for CPU tensors, run by Triton's interpreter: a bundle optimize --device cpu optimizes)")
      ->check(kopt::cli::one_of("--cpu-kernels", {"cpp", "triton"}))
      ->capture_default_str();
  c->add_option("--dtype", cap.dtype, "cast model and floating inputs: float32 | bfloat16 | float16")
      ->check(kopt::cli::one_of("--dtype", kDtypes));
  c->add_flag("--force", cap.force, "overwrite an existing bundle directory");
  c->add_flag("--json", cap.json, "print the bundle's meta.json object on stdout instead of the summary line");
  c->add_flag("--quiet,-q", cap.quiet, "no summary line");

  kopt::cli::InspectOptions ins;
  auto* i = app.add_subcommand("inspect", "show the kernels, launches, extern calls and inputs of a bundle or module");
  i->add_option("target", ins.target, "bundle directory or module .py")->required();
  i->add_flag("--json", ins.json, "one JSON object on stdout");
  i->add_option("--source", ins.source,
                "write this kernel's source (its @triton.jit function, decorators and imports): a candidate file "
                "that verify --candidate and stitch --replace accept");
  i->add_option("--out,-o", ins.out, "with --source: the file to write (default: stdout)");

  kopt::cli::StitchOptions st;
  auto* s = app.add_subcommand("stitch", "replace kernels' sources in a module, leaving every other byte unchanged");
  s->add_option("module", st.module, "Inductor output module .py")->required();
  s->add_option("--replace", st.replace, "NAME=KERNEL.py (repeatable)");
  s->add_option("--out,-o", st.output, "output file (default: stdout)");
  kopt::cli::add_hidden_alias(*s, "--output", st.output);

  kopt::cli::ProfileOptions pr;
  auto* f = app.add_subcommand("profile", "run a bundle's baseline against eager and show where its GPU time goes");
  f->add_option("bundle", pr.bundle, "bundle directory")->required();
  add_device(*f, pr.device, "cuda | cpu (cpu: correctness only, no times)");
  add_one_gpu(*f, pr.gpu);
  kopt::cli::add_number(*f, "--reps", pr.reps, "timed repetitions", Least::one);
  kopt::cli::add_number(*f, "--timeout", pr.timeout_s, "seconds one worker request may take", Least::one);
  f->add_option("--db", pr.db, kDbHelp);
  f->add_flag("--json", pr.json, "one JSON object on stdout");
  f->add_flag("--quiet,-q", pr.quiet, "no progress lines on stderr");

  kopt::cli::VerifyOptions ve;
  auto* v = app.add_subcommand(
      "verify", "run the verification cascade (G1-G4, then the end-to-end gate) on one candidate kernel");
  v->add_option("bundle", ve.bundle, "bundle directory")->required();
  v->add_option("--kernel", ve.kernel, "name of the kernel the candidate replaces")->required();
  v->add_option("--candidate", ve.candidate, "the candidate kernel source (.py)")->required();
  add_device(*v, ve.device, "cuda | cpu (cpu: G4 and E2E timing are not measured)");
  add_one_gpu(*v, ve.gpu);
  kopt::cli::add_gate_flags(*v, ve.gate, {.reps = true});
  kopt::cli::add_seconds_option(*v, "--timeout", ve.gate.timeout,
                                fmt::format("seconds one request running candidate code may take (loading the "
                                            "bundle has its own {} s)",
                                            ve.gate.load_timeout.count()));
  v->add_option("--db", ve.db, kDbHelp);
  v->add_flag("--json", ve.json, "one JSON object on stdout");
  v->add_flag("--quiet,-q", ve.quiet, "no progress lines on stderr");

  kopt::pipeline::OptimizeOptions op;
  auto* z = app.add_subcommand("optimize", "the main job: profile, search, verify and re-stitch a model's Triton kernels");
  z->add_option("target", op.target, "problem .py file (captured first, on the GPU) or bundle directory")->required();
  z->add_option("--out,-o", op.out, "result directory (default: <name>.kernelopt)");
  kopt::cli::add_number(*z, "--budget", op.budget_s, "seconds the job may take, from its workers' start to the report (docs/optimize.md, \"The budget\")", Least::above_zero);
  z->add_option("--gpus", op.gpus, "GPU indices for the workers, comma-separated")->capture_default_str()->check(
      kopt::cli::gpu_list("--gpus", false));
  add_device(*z, op.device, "cuda | cpu (cpu: Triton interpreter, correctness only, no speed claimed)");
  z->add_option("--agents", op.agents,
                "agents: builtin | llm | hybrid (default: hybrid when an LLM endpoint is configured, else builtin)")
      ->check(kopt::cli::one_of("--agents", {"builtin", "llm", "hybrid"}));
  z->add_option("--config", op.config, "LLM config file (default $KERNELOPT_CONFIG, else ./kernelopt.toml; docs/llm.md)");
  kopt::cli::add_number(*z, "--max-cascades", op.max_cascades,
                        "full cascades per kernel (default 3 on a GPU, 1 in CPU mode)", Least::one, "3");
  kopt::cli::add_gate_flags(*z, op.gate);
  kopt::cli::add_seconds_option(*z, "--timeout", op.gate.timeout, "seconds one worker request may take");
  z->add_option("--mode", op.mode, "torch.compile mode when capturing a problem")->capture_default_str();
  z->add_option("--dtype", op.dtype, "cast model and inputs when capturing a problem: float32 | bfloat16 | float16")
      ->check(kopt::cli::one_of("--dtype", kDtypes));
  z->add_option("--db", op.db, kDbHelp);
  z->add_flag("--json", op.json, "print report.json on stdout");
  z->add_flag("--quiet,-q", op.quiet, "no progress lines on stderr");

  kopt::cli::CandidatesOptions ca;
  auto* cd = app.add_subcommand("candidates", "write every candidate the built-in coder proposes for a bundle's "
                                              "kernels, running none (for checking refactorings; docs/testing.md)");
  cd->add_option("bundle", ca.bundle, "bundle directory")->required();
  cd->add_option("--out,-o", ca.out, "new or empty directory for the candidates and manifest.json")->required();
  add_device(*cd, ca.device, "cuda | cpu (the worker that records the kernels' launches)");
  add_one_gpu(*cd, ca.gpu);
  kopt::cli::add_number(*cd, "--timeout", ca.timeout_s, "seconds one worker request may take", Least::one);
  cd->add_flag("--regions", ca.regions_only, "only the region candidates (fusions, splits), each a whole module; "
                                            "starts no worker, so bundles of any size dump in seconds");
  cd->add_flag("--quiet,-q", ca.quiet, "no progress lines on stderr");

  kopt::pipeline::BenchOptions be;
  auto* b = app.add_subcommand("bench", "run the main job on every problem of a suite and write the suite's table "
                                        "(docs/bench.md)");
  b->add_option("suite", be.suite, "suite directory holding level1/, level2/, level3/");
  b->add_option("--levels", be.levels, "levels to run, comma-separated")->capture_default_str();
  b->add_option("--out,-o", be.out, "run directory (default: <suite>.bench); running again resumes it");
  kopt::cli::add_number(*b, "--budget-per-problem", be.budget_s, "each problem's job budget, seconds (optimize --budget)", Least::above_zero);
  b->add_option("--shard", be.shard, "I/N: run only shard I of N (docs/scaling.md)");
  b->add_option("--gpus", be.gpus, "GPU indices, comma-separated: one worker and one problem at a time per GPU")
      ->capture_default_str()
      ->check(kopt::cli::gpu_list("--gpus", false));
  add_device(*b, be.device, "cuda | cpu (cpu: bundles only, correctness only, no speed claimed)");
  b->add_option("--agents", be.agents, "agent implementations: builtin")->capture_default_str()->check(
      kopt::cli::one_of("--agents", {"builtin"}));
  b->add_option("--mode", be.mode, "torch.compile mode when capturing problem files")->capture_default_str();
  kopt::cli::add_number(*b, "--reps", be.reps, "timed calls per variant when measuring a problem", Least::one);
  kopt::cli::add_number(*b, "--timeout", be.timeout_s, "seconds one worker request may take", Least::one);
  b->add_option("--db", be.db, kDbHelp);
  b->add_option("--capture-jobs", be.capture_jobs,
                "problems captured ahead of their jobs, this many at a time (0: each job captures its own)")
      ->capture_default_str()
      ->check(kopt::cli::number("--capture-jobs", Least::zero, true, std::to_string(be.capture_jobs), 64));
  b->add_flag("--fresh", be.fresh, "start a new run in --out instead of resuming the one there");
  b->add_flag("--verbose,-v", be.verbose, "also print the main job's own progress lines");
  bool bench_json = false;
  b->add_flag("--json", bench_json, "print the object the reports render on stdout instead of the table");
  kopt::cli::BenchMergeOptions bm;
  auto* bmc = b->add_subcommand("merge", "combine the results of shard runs into one table");
  bmc->add_option("dirs", bm.dirs, "run directories of the shards")->required();
  bmc->add_option("--out,-o", bm.out, "directory for the merged table")->required();
  bmc->add_flag("--later-wins", bm.later_wins,
                "a problem in several runs: keep the row of the run given last (a partial re-run over a whole one)");
  bmc->add_flag("--json", bm.json, "print the object the reports render on stdout instead of the table");
  kopt::cli::LlmCheckOptions lc;
  auto* l = app.add_subcommand("llm", "the LLM agents' endpoint (docs/llm.md)");
  l->require_subcommand(1);
  auto* lcheck = l->add_subcommand("check", "send one tiny request; print latency, model and whether it worked");
  lcheck->add_option("--config", lc.config, "LLM config file (default $KERNELOPT_CONFIG, else ./kernelopt.toml)");
  lcheck->add_flag("--json", lc.json, "one JSON object on stdout");

  kopt::cli::ParseOptions ps;
  auto* p = app.add_subcommand("parse", "parse a Python file with kernelopt's parser (for testing the parser)");
  p->add_option("file", ps.file, "Python file")->required();
  p->add_flag("--dump", ps.dump, "print the normalized syntax tree (docs/parser.md)");
  p->add_flag("--print", ps.print, "reprint the file from its tokens");

  try {
    std::vector<std::string> args = kopt::cli::resolve_commands(app, {argv + 1, argv + argc});
    std::reverse(args.begin(), args.end());  // CLI11's vector form takes the arguments last first
    app.parse(args);
  } catch (const CLI::Success& e) {  // --help, --version, `kernelopt help`
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error_line(kopt::cli::parse_error_line(app, e));
  } catch (const kopt::UserError& e) {
    return error_line(e.what());
  }
  try {
    if (*c) return kopt::cli::capture(cap);
    if (*i) return kopt::cli::inspect(ins);
    if (*s) return kopt::cli::stitch(st);
    if (*p) return kopt::cli::parse(ps);
    if (*f) return kopt::cli::profile(pr);
    if (*v) return kopt::cli::verify(ve);
    if (*z) return kopt::cli::optimize(op);
    if (*cd) return kopt::cli::candidates(ca);
    if (*bmc) return kopt::cli::bench_merge(bm);
    if (*b) {
      if (be.suite.empty()) throw kopt::UserError("bench: give the suite directory, e.g. kernelopt bench benchmarks/suite");
      return kopt::cli::bench(be, bench_json);
    }
    if (*lcheck) return kopt::cli::llm_check(lc);
  } catch (const kopt::worker::Interrupted& e) {
    // The job wrote its partial report; the exit status says the run did not end on its own.
    std::cerr << "kernelopt: " << e.what() << "\n";
    return 128 + e.signal;
  } catch (const kopt::UserError& e) {
    return error_line(e.what());
  } catch (const kopt::py::ParseError& e) {
    return error_line(e.what());
  } catch (const std::exception& e) {
    std::cerr << "kernelopt: internal error: " << e.what() << " (please report this)\n";
    return 3;
  }
  return 2;
}
