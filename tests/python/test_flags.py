"""The command line's validation layer (engine/src/cli/flags.h): every bad flag value, unknown flag or
command and missing argument is one line, `kernelopt: error: <what>; <the fix>`, with exit code 2, before
anything starts; `kernelopt help [CMD]` prints help; the shared flags mean the same on every subcommand;
and the runs that would do nothing (a bundle with no Triton kernel) say so and why."""

import json

import pytest
from conftest import CORPUS, ROOT
from test_cli import one_error_line, run

DATA = ROOT / "tests" / "python" / "data"
OPT = ["optimize", "nowhere/bundle"]  # parse errors come first: the target is never looked at
VERIFY = ["verify", "nowhere/bundle", "--kernel", "k", "--candidate", "c.py"]

# (arguments, texts the one line must hold: what is wrong, then the fix)
BAD_FLAGS = [
    (OPT + ["--timeout", "-1"], ["--timeout -1: out of range", "give a whole number of 1 or more, e.g. --timeout 600"]),
    (OPT + ["--timeout", "0"], ["--timeout 0: out of range", "e.g. --timeout 600"]),
    (OPT + ["--seeds", "-1"], ["--seeds -1: out of range", "give a whole number of 0 or more, e.g. --seeds 5"]),
    (OPT + ["--gamma", "0"], ["--gamma 0: out of range", "give a number of 1 or more, e.g. --gamma 1.03"]),
    (OPT + ["--max-cascades", "0"], ["--max-cascades 0: out of range", "e.g. --max-cascades 3"]),
    (OPT + ["--budget", "abc"], ["--budget abc: not a number", "give a number above 0, e.g. --budget 60"]),
    (OPT + ["--budget", "0"], ["--budget 0: out of range", "above 0"]),
    (OPT + ["--budget=-5"], ["--budget -5: out of range", "e.g. --budget 60"]),
    (OPT + ["--atol-fp32", "-1e-3"], ["--atol-fp32 -1e-3: out of range", "0 or more"]),
    (OPT + ["--rtol-half", "x"], ["--rtol-half x: not a number", "e.g. --rtol-half 0.01"]),
    (OPT + ["--device", "gpu"], ["--device gpu: not one of cuda, cpu", "e.g. --device cuda"]),
    (OPT + ["--dtype", "float17"], ["--dtype float17: not one of float32, bfloat16, float16",
                                    "did you mean --dtype float16?"]),
    (OPT + ["--agents", "llmx"], ["--agents llmx: not one of builtin, llm, hybrid", "did you mean --agents llm?"]),
    (OPT + ["--gpus", "0,,1"], ["--gpus 0,,1: an empty GPU index", "e.g. --gpus 0,1"]),
    (OPT + ["--gpus", "-1"], ["--gpus -1: -1 is not a GPU index", "e.g. --gpus 0,1"]),
    (OPT + ["--budgett", "5"], ["optimize: unknown flag --budgett", "did you mean --budget?"]),
    (OPT + ["--frobnicate"], ["optimize: unknown flag --frobnicate", "kernelopt help optimize"]),
    (OPT + ["--budget"], ["optimize: --budget needs a value", "kernelopt help optimize"]),
    (VERIFY + ["--reps", "0"], ["--reps 0: out of range", "e.g. --reps 50"]),
    (VERIFY + ["--seeds", "2.5"], ["--seeds 2.5: not a whole number", "e.g. --seeds 5"]),
    (VERIFY + ["--gpus", "0,1"], ["--gpus 0,1: more than one GPU", "give one GPU index, e.g. --gpus 0"]),
    (["verify", "nowhere/bundle", "--candidate", "c.py"], ["verify: --kernel is missing", "give --kernel"]),
    (["profile", "b", "--reps", "0"], ["--reps 0: out of range", "e.g. --reps 20"]),
    (["profile", "b", "--timeout", "-5"], ["--timeout -5: out of range", "e.g. --timeout 600"]),
    (["profile", "b", "--gpu", "0,1"], ["--gpus 0,1: more than one GPU", "e.g. --gpus 0"]),
    (["candidates", "b", "-o", "d", "--timeout", "1.5"], ["--timeout 1.5: not a whole number", "e.g. --timeout 600"]),
    (["bench", "suite", "--capture-jobs", "65"], ["--capture-jobs 65: out of range",
                                                  "give a whole number from 0 to 64, e.g. --capture-jobs 4"]),
    (["bench", "suite", "--budget-per-problem", "0"], ["--budget-per-problem 0: out of range",
                                                       "e.g. --budget-per-problem 60"]),
    (["bench", "suite", "--reps", "-2"], ["--reps -2: out of range", "e.g. --reps 30"]),
    (["bench", "suite", "--agents", "llm"], ["--agents llm: not one of builtin"]),
    (["capture", "p.py", "-o", "d", "--seed", "-3"], ["--seed -3: out of range", "e.g. --seed 0"]),
    (["capture", "p.py", "-o", "d", "--device", "cuda:0"], ["--device cuda:0: not one of cuda, cpu"]),
    (["capture", "p.py"], ["capture: --out is missing", "give --out (bundle directory to write)"]),
    (["inspect"], ["inspect: the target argument is missing", "bundle directory or module .py"]),
    (["inspect", "a", "b"], ["inspect: unexpected argument b", "kernelopt help inspect"]),
    (["llm"], ["llm: give a command: check", "kernelopt help llm"]),
]


@pytest.mark.parametrize("args,needles", BAD_FLAGS, ids=[" ".join(a) for a, _ in BAD_FLAGS])
def test_a_bad_flag_is_one_line_with_its_fix(kernelopt_bin, tmp_path, args, needles):
    r = run(kernelopt_bin, *args, cwd=tmp_path)
    line = one_error_line(r, *needles)
    assert "; " in line, line  # <what>; <the fix>
    assert r.stdout == "" and not list(tmp_path.iterdir())  # nothing started, nothing written


@pytest.mark.parametrize("args,needles", [
    (["optimise"], ["unknown command 'optimise'; did you mean 'optimize'?"]),
    (["optimise", "x.py", "--budget", "5"], ["unknown command 'optimise'; did you mean 'optimize'?"]),
    (["inpsect", "b"], ["unknown command 'inpsect'; did you mean 'inspect'?"]),
    (["frobnicate"], ["unknown command 'frobnicate'; the commands are capture, inspect", "kernelopt help"]),
    (["llm", "chek"], ["unknown command 'llm chek'; did you mean 'llm check'?"]),
    (["help", "optimise"], ["unknown command 'optimise'; did you mean 'optimize'?"]),
    ([], ["no command given; run kernelopt help"]),
    (["--frobnicate"], ["unknown flag --frobnicate", "flags go after their command"]),
    (["-q", "optimize", "x.py"], ["unknown flag -q", "flags go after their command"]),
])
def test_an_unknown_command_is_named_with_the_closest(kernelopt_bin, args, needles):
    one_error_line(run(kernelopt_bin, *args), *needles)


@pytest.mark.parametrize("args,shows", [
    (["help"], ["optimize", "capture", "bench", "llm"]),
    (["--help"], ["optimize", "capture"]),
    (["help", "optimize"], ["--budget", "--max-cascades", "-o,--out", "--gpus"]),
    (["help", "optimize", "model.py"], ["--budget"]),
    (["optimize", "--help"], ["--budget"]),
    (["help", "bench", "merge"], ["--later-wins"]),
    (["help", "llm", "check"], ["--config", "--json"]),
])
def test_help_prints_and_exits_zero(kernelopt_bin, args, shows):
    r = run(kernelopt_bin, *args)
    assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
    for s in shows:
        assert s in r.stdout, (s, r.stdout)


def _help(binary, *command):
    r = run(binary, "help", *command)
    assert r.returncode == 0, r.stderr
    return r.stdout


COMMANDS = ["capture", "inspect", "stitch", "profile", "verify", "optimize", "candidates", "bench", "bench merge",
            "llm check", "parse"]


@pytest.mark.parametrize("command", COMMANDS)
def test_shared_flags_are_spelled_alike(kernelopt_bin, command):
    text = _help(kernelopt_bin, *command.split())
    # An output path is always -o/--out; GPUs always --gpus; progress off always -q/--quiet.
    assert "--output" not in text and "--gpu " not in text and "--gpu=" not in text, text
    if "--out" in text:
        assert "-o,--out" in text, text
    if "--quiet" in text:
        assert "-q,--quiet" in text, text
    if "--verbose" in text:
        assert "-v,--verbose" in text, text
    # The defaults shown are the option structs' own.
    if command == "optimize":
        assert "--budget FLOAT:POSITIVE=60" in text and "--timeout INT:POSITIVE=600" in text, text
    if command == "bench":
        assert "--capture-jobs INT=4" in text or "--capture-jobs INT:NONNEGATIVE=4" in text, text


def test_old_spellings_still_parse(kernelopt_bin, tmp_path):
    # stitch's --output and the one-worker commands' --gpu, hidden from the help.
    module = CORPUS / "softmax_lastdim" / "module_0.py"
    out = tmp_path / "same.py"
    r = run(kernelopt_bin, "stitch", module, "--output", out)
    assert r.returncode == 0 and out.read_text() == module.read_text(), r.stderr
    r = run(kernelopt_bin, "stitch", module, "-o", tmp_path / "again.py")
    assert r.returncode == 0 and (tmp_path / "again.py").read_text() == module.read_text(), r.stderr
    line = one_error_line(run(kernelopt_bin, "profile", tmp_path / "nothing", "--gpu", "0"))
    assert "unknown flag" not in line, line  # parsed; the bundle is what is missing


# ------------------------------------------------------------------ no silent no-ops


def test_optimize_refuses_a_bundle_inductor_left_to_aten(kernelopt_bin, tmp_path):
    # corpus/avg_pool3d_padded: Inductor called aten.avg_pool3d for the whole model, no Triton kernel.
    out = tmp_path / "out"
    r = run(kernelopt_bin, "optimize", CORPUS / "avg_pool3d_padded", "--device", "cpu", "--out", out,
            "--db", tmp_path / "r.db")
    one_error_line(r, "avg_pool3d_padded: no Triton kernel to optimize",
                   "Inductor called vendor/ATen code for the whole model (torch.ops.aten.avg_pool3d.default)",
                   "use the torch.compile'd model as it is")
    assert not out.exists() and r.stdout == ""  # refused before any worker started


def test_optimize_refuses_a_bundle_captured_for_the_cpu_backend(kernelopt_bin, tmp_path):
    # A real `kernelopt capture examples/problems/linear_gelu.py --device cpu` bundle: C++ kernels only.
    bundle = DATA / "linear_gelu_cpu_backend"
    assert "cpp_fused" in (bundle / "module_0.py").read_text()
    r = run(kernelopt_bin, "optimize", bundle, "--device", "cpu", "--out", tmp_path / "out", "--db", tmp_path / "r.db")
    one_error_line(r, "no Triton kernel to optimize", "captured with --device cpu, where Inductor writes C++ kernels",
                   "capture the model on a CUDA device")


def test_verify_on_such_a_bundle_says_why_there_is_no_kernel(kernelopt_bin, tmp_path):
    r = run(kernelopt_bin, "verify", CORPUS / "avg_pool3d_padded", "--kernel", "triton_poi_fused_0", "--candidate",
            tmp_path / "k.py", "--device", "cpu", "--db", tmp_path / "r.db")
    one_error_line(r, "no Triton kernel to optimize", "Inductor called vendor/ATen code")


def test_inspect_and_stitch_still_take_such_bundles(kernelopt_bin):
    for bundle in (CORPUS / "avg_pool3d_padded", DATA / "linear_gelu_cpu_backend"):
        r = run(kernelopt_bin, "inspect", bundle, "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["kernels"] == [], r.stderr


def test_a_failed_capture_inside_optimize_prints_once(kernelopt_bin, tmp_path):
    # A Triton kernel file without get_inputs(): captured in CPU mode, where the capture fails.
    problem = tmp_path / "kernel.py"
    problem.write_text("import triton\n\n\n@triton.jit\ndef copy_kernel(x):\n    pass\n")
    r = run(kernelopt_bin, "optimize", problem, "--device", "cpu", "--out", tmp_path / "out", "-q",
            "--db", tmp_path / "r.db")
    line = one_error_line(r, "capturing", "lacks get_inputs()", "define get_inputs()")
    assert r.stderr.count("lacks get_inputs()") == 1, r.stderr
    assert line.startswith("kernelopt: error: capturing ")


def test_a_file_without_model_is_not_called_a_kernel_file(kernelopt_bin, tmp_path):
    # No class Model and no triton/helion import: a problem file missing its Model, not a kernel file
    # (which CPU mode would capture by running its kernels).
    problem = tmp_path / "problem.py"
    problem.write_text("import torch\n\n\nclass MyModel(torch.nn.Module):\n    pass\n\n\n"
                       "def get_inputs():\n    return []\n")
    r = run(kernelopt_bin, "optimize", problem, "--device", "cpu", "--out", tmp_path / "out", "--db", tmp_path / "r.db")
    assert "(a kernel file)" not in r.stderr and "capturing" in r.stderr.splitlines()[0], r.stderr
    r = run(kernelopt_bin, "optimize", problem, "--device", "cpu", "--out", tmp_path / "out2", "-q",
            "--db", tmp_path / "r.db")
    one_error_line(r, "capturing", "lacks Model", "define class Model(nn.Module)")


def test_capture_for_the_cpu_backend_warns(kernelopt_bin, tmp_path):
    # The warning is the capture's own (worker/capture/capture.py), printed after a successful capture;
    # checked here on a model small enough to compile in seconds.
    problem = tmp_path / "add_one.py"
    problem.write_text("import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return x + 1\n\n\ndef get_inputs():\n    return [torch.randn(8)]\n\n\n"
                       "def get_init_inputs():\n    return []\n")
    r = run(kernelopt_bin, "capture", problem, "--out", tmp_path / "b", "--device", "cpu", "--json")
    assert r.returncode == 0, r.stderr
    meta = json.loads(r.stdout)  # --json: meta.json's object, as on every command that has it
    assert meta["device"] == "cpu" and meta["graphs"]
    warnings = [x for x in r.stderr.splitlines() if "warning:" in x]
    assert len(warnings) == 1 and "C++ kernels, which kernelopt cannot optimize" in warnings[0], r.stderr
    assert "--device cuda" in warnings[0]
