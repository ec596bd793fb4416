// The command line's validation layer (cli/flags.h), the check that refuses a bundle with no Triton kernel
// (cli/commands.h: no_triton_kernel) and the kernel-file test the capture's caller labels by
// (pipeline/capture.h). tests/python/test_flags.py runs the same through the binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "pipeline/capture.h"
#include "util/error.h"

using namespace kopt;
namespace fs = std::filesystem;

namespace {

// A root with `optimize --budget S [-o DIR]` and `llm check`, as main.cpp wires them.
struct Cli {
  CLI::App app{"test"};
  double budget = 60;
  std::string out;
  Cli() {
    app.require_subcommand(1);
    CLI::App* z = app.add_subcommand("optimize", "");
    cli::add_number(*z, "--budget", budget, "seconds", cli::Least::above_zero);
    z->add_option("--out,-o", out, "");
    CLI::App* l = app.add_subcommand("llm", "");
    l->require_subcommand(1);
    l->add_subcommand("check", "");
  }
  // The one line main.cpp prints after "kernelopt: error: ", or "" when the arguments parse.
  std::string error(std::vector<std::string> args) {
    try {
      args = cli::resolve_commands(app, args);
      std::reverse(args.begin(), args.end());
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return cli::parse_error_line(app, e);
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  }
};

std::string validate(const CLI::Validator& v, std::string text) { return v(text); }

}  // namespace

TEST(Flags, ClosestIsATypoAway) {
  std::vector<std::string> commands = {"capture", "inspect", "optimize", "profile", "verify"};
  EXPECT_EQ(cli::closest("optimise", commands), "optimize");
  EXPECT_EQ(cli::closest("inpsect", commands), "inspect");
  EXPECT_EQ(cli::closest("opt", commands), "optimize");  // a prefix
  EXPECT_EQ(cli::closest("frobnicate", commands), "");
  EXPECT_EQ(cli::closest("x", commands), "");
  EXPECT_EQ(cli::closest("gpu", {"cuda", "cpu"}), "");  // another word, not a typo of cpu
}

TEST(Flags, NumberNamesTheValueTheRangeAndAnExample) {
  CLI::Validator timeout = cli::number("--timeout", cli::Least::one, true, "600");
  EXPECT_EQ(validate(timeout, "600"), "");
  EXPECT_EQ(validate(timeout, "-1"), "--timeout -1: out of range; give a whole number of 1 or more, e.g. --timeout 600");
  EXPECT_EQ(validate(timeout, "1.5"), "--timeout 1.5: not a whole number; give a whole number of 1 or more, e.g. "
                                      "--timeout 600");
  EXPECT_EQ(validate(timeout, ""), "--timeout : not a number; give a whole number of 1 or more, e.g. --timeout 600");
  CLI::Validator budget = cli::number("--budget", cli::Least::above_zero, false, "60");
  EXPECT_EQ(validate(budget, "0.5"), "");
  EXPECT_EQ(validate(budget, "abc"), "--budget abc: not a number; give a number above 0, e.g. --budget 60");
  EXPECT_NE(validate(budget, "0"), "");
  EXPECT_NE(validate(budget, "inf"), "");
  EXPECT_NE(validate(budget, "nan"), "");
  CLI::Validator jobs = cli::number("--capture-jobs", cli::Least::zero, true, "4", 64);
  EXPECT_EQ(validate(jobs, "0"), "");
  EXPECT_EQ(validate(jobs, "64"), "");
  EXPECT_EQ(validate(jobs, "65"), "--capture-jobs 65: out of range; give a whole number from 0 to 64, e.g. "
                                  "--capture-jobs 4");
}

TEST(Flags, ChoicesAndGpus) {
  CLI::Validator device = cli::one_of("--device", {"cuda", "cpu"});
  EXPECT_EQ(validate(device, "cpu"), "");
  EXPECT_EQ(validate(device, "cdua"), "--device cdua: not one of cuda, cpu; did you mean --device cuda?");
  CLI::Validator many = cli::gpu_list("--gpus", false), one = cli::gpu_list("--gpus", true);
  EXPECT_EQ(validate(many, "0,1"), "");
  EXPECT_EQ(validate(many, "GPU-5f3e"), "");  // a UUID, as CUDA_VISIBLE_DEVICES takes
  EXPECT_NE(validate(many, "0,"), "");
  EXPECT_NE(validate(many, ""), "");
  EXPECT_NE(validate(many, "-1"), "");
  EXPECT_EQ(validate(one, "1"), "");
  EXPECT_EQ(validate(one, "0,1"), "--gpus 0,1: more than one GPU; this command starts one worker: give one GPU "
                                  "index, e.g. --gpus 0");
}

TEST(Flags, ParseErrorsBecomeOneLine) {
  EXPECT_EQ(Cli().error({"optimize", "--budget", "5"}), "");
  EXPECT_EQ(Cli().error({"optimize", "--budget", "-5"}),
            "--budget -5: out of range; give a number above 0, e.g. --budget 60");
  EXPECT_EQ(Cli().error({"optimize", "--budgte", "5"}), "optimize: unknown flag --budgte; did you mean --budget?");
  EXPECT_EQ(Cli().error({"optimize", "--budget"}), "optimize: --budget needs a value; see kernelopt help optimize");
  EXPECT_EQ(Cli().error({"llm"}), "llm: give a command: check; see kernelopt help llm");
}

TEST(Flags, CommandsAreResolvedBeforeParsing) {
  EXPECT_EQ(Cli().error({"optimise"}), "unknown command 'optimise'; did you mean 'optimize'?");
  EXPECT_EQ(Cli().error({"llm", "chek"}), "unknown command 'llm chek'; did you mean 'llm check'?");
  EXPECT_EQ(Cli().error({}).rfind("no command given; run kernelopt help", 0), 0u);
  EXPECT_EQ(Cli().error({"--budget", "5"}).rfind("unknown flag --budget; flags go after their command", 0), 0u);
  // `help [CMD...]` is CMD's --help; what follows the command words is dropped.
  Cli c;
  EXPECT_EQ(cli::resolve_commands(c.app, {"help"}), std::vector<std::string>({"--help"}));
  EXPECT_EQ(cli::resolve_commands(c.app, {"help", "llm", "check"}),
            std::vector<std::string>({"llm", "check", "--help"}));
  EXPECT_EQ(cli::resolve_commands(c.app, {"help", "optimize", "x.py"}),
            std::vector<std::string>({"optimize", "--help"}));
  EXPECT_THROW(cli::resolve_commands(c.app, {"help", "optimise"}), UserError);
}

TEST(Flags, KernelFilesImportTritonOrHelionAndHaveNoModel) {
  fs::path dir = fs::temp_directory_path() / ("kopt_flags_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  EXPECT_TRUE(pipeline::is_kernel_file(file("k.py", "import torch\nimport triton\n@triton.jit\ndef k(x): pass\n")));
  EXPECT_TRUE(pipeline::is_kernel_file(file("h.py", "import torch\nimport helion.language as hl\n")));
  EXPECT_TRUE(pipeline::is_kernel_file(file("f.py", "from triton import language as tl\n")));
  EXPECT_FALSE(pipeline::is_kernel_file(file("m.py", "import torch\nimport triton\nclass Model(torch.nn.Module):\n")));
  // Neither a Model nor a kernel library: a problem file missing its Model (the capture says so).
  EXPECT_FALSE(pipeline::is_kernel_file(file("n.py", "import torch\nclass MyModel(torch.nn.Module):\n    pass\n")));
  EXPECT_FALSE(pipeline::is_kernel_file(file("t.py", "import tritonclient\n")));
  fs::remove_all(dir);
}

TEST(Flags, NoTritonKernelSaysWhy) {
  const std::string corpus = std::string(KOPT_SOURCE_DIR) + "/corpus/";
  std::string aten = cli::no_triton_kernel(*ir::load_bundle(corpus + "avg_pool3d_padded"));
  EXPECT_NE(aten.find("no Triton kernel to optimize: Inductor called vendor/ATen code for the whole model "
                      "(torch.ops.aten.avg_pool3d.default)"),
            std::string::npos)
      << aten;
  std::string cpu = cli::no_triton_kernel(
      *ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/linear_gelu_cpu_backend"));
  EXPECT_NE(cpu.find("captured with --device cpu, where Inductor writes C++ kernels; capture the model on a CUDA "
                     "device"),
            std::string::npos)
      << cpu;
  EXPECT_EQ(cli::no_triton_kernel(*ir::load_bundle(corpus + "softmax_lastdim")), "");
  EXPECT_EQ(cli::no_triton_kernel(*ir::load_bundle(corpus + "triton/softmax")), "");  // a kernel file, CPU-captured
}
