"""Standalone Triton kernel files (docs/inputs.md): capture on the CPU through the interpreter, the
bundle they make (an Inductor-style module the engine parses), the worker running it against the
original launcher, the cascade and optimize on it, Python loading, and every bad input's one-line
error. The corpus holds small captures of examples/triton/ under corpus/triton/."""

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import CORPUS, ROOT

os.environ["KERNELOPT_DEVICE"] = "cpu"
from kernelopt.worker import bundle_state  # noqa: E402
from kernelopt.worker.bundle_runner import rebuild_problem, run_bundle  # noqa: E402
from kernelopt.worker.capture import capture as cap  # noqa: E402
from kernelopt.worker.ops import bundle_ops  # noqa: E402

EXAMPLES = ROOT / "examples" / "triton"
TRITON_CORPUS = sorted((CORPUS / "triton").glob("*/meta.json"))


def _capture(tmp_path, text: str, name: str = "k.py"):
    # Without TRITON_INTERPRET: capture restarts itself with the interpreter for a kernel file.
    path = tmp_path / name
    path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run([sys.executable, "-m", "kernelopt.worker.capture", str(path), "--out",
                           str(tmp_path / "b"), "--device", "cpu"], capture_output=True, text=True, timeout=120,
                          env=dict(env, PYTHONPATH=str(ROOT / "python")))


def test_capture_softmax_writes_an_inductor_style_bundle(tmp_path):
    meta = cap.capture(EXAMPLES / "softmax.py", tmp_path / "b", device="cpu")
    assert meta["input_kind"] == "triton" and meta["launcher"] == "launch" and meta["has_reference"]
    assert meta["eager_vs_compiled"] == {"max_abs": 0.0, "max_rel": 0.0}  # same kernel, same config
    module = (tmp_path / "b" / "module_0.py").read_text()
    assert "@triton_heuristics.user_autotune(" in module and "'grid_type': 'FixedGrid'" in module
    assert "triton_softmax_kernel_0.run(buf0, arg0_1, 512, 512, 512, 64, 1, 1, stream=stream0)" in module
    assert "'constants': {'BLOCK_SIZE': 512}" in module
    assert (tmp_path / "b" / "problem.py").read_bytes() == (EXAMPLES / "softmax.py").read_bytes()
    # The module runs on its own (no Dynamo) and equals the original launcher on the same inputs.
    model, inputs = rebuild_problem(tmp_path / "b", "cpu")
    (got,) = run_bundle(tmp_path / "b", "cpu")
    assert torch.equal(got, model(*inputs))
    assert torch.allclose(got, torch.softmax(inputs[0], -1), atol=1e-6)


@pytest.mark.parametrize("meta_path", TRITON_CORPUS, ids=lambda p: p.parent.name)
def test_corpus_bundle_matches_its_launcher_and_each_kernel_alone(meta_path):
    bundle = meta_path.parent
    req = {"bundle": str(bundle)}
    base = bundle_ops.run_baseline(req)
    assert base["match"] and base["launches"] >= 1, base
    state = bundle_state.get_bundle(req)
    for rec in state.launches:
        r = bundle_ops.run_kernel(dict(req, kernel=state.kernel_name(0, rec.kernel), launch=rec.index, seed=3))
        assert r["match"], r["comparison"]
    # G3's float64 reference is the file's reference(); the baseline is close to it.
    fp64 = bundle_ops.run_fp64(req)["baseline_vs_fp64"]
    assert fp64["ok"], fp64
    bundle_state.loaded_bundles.clear()


def test_autotuned_kernel_records_its_configs(tmp_path):
    meta = json.loads((CORPUS / "triton" / "matmul_bias_relu" / "meta.json").read_text())
    (decl,) = meta["kernels"]
    assert len(decl["autotune"]["configs"]) == 3
    assert decl["autotune"]["chosen"] == decl["autotune"]["configs"][0]  # CPU: first config, said so
    assert "CPU" in decl["autotune"]["chosen_by"]
    assert decl["config"]["BLOCK_M"] == 32 and decl["config"]["num_stages"] == 2


def test_two_kernel_launcher_keeps_its_workspace(tmp_path):
    module = (CORPUS / "triton" / "column_sum" / "module_0.py").read_text()
    assert module.count(".run(") == 2
    assert "triton_partial_sum_kernel_0.run(arg0_1, buf0," in module and "triton_fold_kernel_1.run(buf0, buf1," in module


def test_engine_inspects_verifies_and_optimizes_a_kernel_file(kernelopt_bin, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), KERNELOPT_DB=str(tmp_path / "k.db"))
    bundle = CORPUS / "triton" / "softmax"
    r = subprocess.run([kernelopt_bin, "inspect", bundle, "--json"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    (k,) = json.loads(r.stdout)["kernels"]
    assert k["name"] == "triton_softmax_kernel_0" and k["kind"] == "user_autotune" and k["launches"] == 1
    # A candidate that computes something else is rejected by G2 against the original kernel.
    src = json.loads(r.stdout)["kernels"][0].get("source") or _kernel_source(bundle)
    bad = src.replace("y = num / tl.sum(num, axis=0)", "y = num / (tl.sum(num, axis=0) + 1.0)")
    assert bad != src
    (tmp_path / "bad.py").write_text(bad)
    v = subprocess.run([kernelopt_bin, "verify", bundle, "--kernel", "triton_softmax_kernel_0", "--candidate",
                        tmp_path / "bad.py", "--device", "cpu"], capture_output=True, text=True, env=env, timeout=300)
    assert v.returncode != 0 and "G2" in v.stdout + v.stderr, v.stdout + v.stderr
    o = subprocess.run([kernelopt_bin, "optimize", bundle, "--device", "cpu", "--out", tmp_path / "res"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert o.returncode == 0, o.stdout + o.stderr
    report = json.loads((tmp_path / "res" / "report.json").read_text())
    (kernel,) = report["kernels"]
    assert kernel["name"] == "triton_softmax_kernel_0" and kernel["kind"] == "user_autotune" and kernel["accepted"]
    assert (tmp_path / "res" / "module_0.py").exists() and (tmp_path / "res" / "baseline" / "module_0.py").exists()
    # The search varied launch options of the user kernel and the cascade accepted one (CPU: correctness only).
    assert "fixed_config(" in (tmp_path / "res" / "module_0.py").read_text(), o.stdout


def _kernel_source(bundle):
    from kernelopt.worker.measure.launches import kernel_decls

    ((_, src),) = kernel_decls((bundle / "module_0.py").read_text()).values()
    return src


def test_load_launcher_runs_the_result_like_the_original():
    import kernelopt

    bundle = CORPUS / "triton" / "layer_norm"
    run = kernelopt.load_launcher(bundle, device="cpu")
    model, inputs = rebuild_problem(bundle, "cpu")
    assert torch.equal(run(*inputs), model(*inputs))
    with pytest.raises(kernelopt.ResultError, match="recorded"):
        run(inputs[0][:, :512], *inputs[1:])
    with pytest.raises(kernelopt.ResultError, match="load_launcher"):
        kernelopt.load(bundle, model)
    with pytest.raises(kernelopt.ResultError, match=r"kernelopt.load\(path, model\)"):
        kernelopt.load_launcher(CORPUS / "softmax_lastdim", device="cpu")


# ---------------------------------------------------------------- bad input

_KERNEL = """
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)

def get_inputs():
    return [torch.randn(1000)]
"""


@pytest.mark.parametrize("text, needles", [
    ("import torch, triton\ndef launch(x):\n    return x\ndef get_inputs():\n    return [torch.randn(4)]\n",
     ["defines no Triton kernel", "@triton.jit"]),
    ("import torch\ndef launch(x):\n    return x\n", ["lacks Model, get_inputs", "docs/inputs.md"]),
    (_KERNEL, ["defines k but no launcher", "def launch(*inputs)"]),
    (_KERNEL + "def launch(x):\n    y = torch.empty_like(x)\n    k[(triton.cdiv(x.numel(), BLOCK),)](x, y, x.numel(), B=BLOCK)\n"
     "    return y\n", ["reads global 'BLOCK'", "define it in the file"]),
    (_KERNEL + "def launch(x):\n    y = torch.empty_like(x)\n    k[(4,)](x, y, x.numel(), B=256)\n    y.add_(1)\n"
     "    return y\n", ["differs from the launcher", "keep only allocations"]),
    (_KERNEL + "def launch(x):\n    y = torch.empty_like(x)\n    k[(4,)](x, y, x.numel(), B=256)\n    return y + 1\n",
     ["output 0 of the launcher is a tensor the launcher made with something other than torch.empty"]),
    (_KERNEL + "def launch(x):\n    return x * 2\n", ["launched no Triton kernel"]),
    (_KERNEL + "def run_a(x):\n    return x\ndef run_b(x):\n    return x\n",
     ["several candidate launchers (run_a, run_b)", "name the launcher `launch`"]),
])
def test_bad_kernel_files_name_the_fix(tmp_path, text, needles):
    path = tmp_path / "k.py"
    path.write_text(text)
    with pytest.raises(cap.CaptureError) as e:
        cap.capture(path, tmp_path / "b", device="cpu")
    for n in needles:
        assert n in str(e.value), str(e.value)
    assert "\n" not in str(e.value) and not (tmp_path / "b").exists()


def test_bad_kernel_file_fails_in_one_line_with_exit_2(tmp_path):
    r = _capture(tmp_path, _KERNEL)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelopt capture: error: "), r.stderr
    assert "no launcher" in lines[0] and "def launch(*inputs)" in lines[0]
    assert not (tmp_path / "b").exists()
    good = _capture(tmp_path, _KERNEL + "def launch(x):\n    y = torch.empty_like(x)\n    k[(4,)](x, y, x.numel(), B=256)\n"
                    "    return y\n", name="good.py")
    assert good.returncode == 0 and "wrote" in good.stdout, good.stderr


def test_helion_file_without_helion_names_the_install(tmp_path):
    text = "import helion\nimport torch\n\ndef get_inputs():\n    return [torch.randn(4)]\n"
    path = tmp_path / "h.py"
    path.write_text(text)
    # A Python where helion cannot be found: its import machinery refuses the name.
    code = ("import sys, importlib.abc\nclass NoHelion(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'helion' or name.startswith('helion.'): raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, NoHelion())\nfor m in [m for m in sys.modules if m.startswith('helion')]: del sys.modules[m]\n"
            "from kernelopt.worker.capture.capture import main\nsys.exit(main(sys.argv[1:]))\n")
    r = subprocess.run([sys.executable, "-c", code, str(path), "--out", str(tmp_path / "b"), "--device", "cpu"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert r.returncode == 2, r.stderr
    assert "helion is not installed" in r.stderr and "pip install helion==" in r.stderr, r.stderr


def test_a_capture_that_hangs_is_stopped_by_the_timeout(kernelopt_bin, tmp_path):
    """`optimize` bounds the capture it starts by --timeout: a launcher that never returns ends in one error
    line naming the fix, exit 2, well before the test's own limit (the suite runner relies on this)."""
    path = tmp_path / "hang.py"
    path.write_text(_KERNEL + "def launch(x):\n    import time\n    time.sleep(600)\n    return x\n")
    r = subprocess.run([kernelopt_bin, "optimize", str(path), "--device", "cpu", "--out", str(tmp_path / "out"),
                        "--db", str(tmp_path / "r.db"), "--timeout", "8", "-q"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "did not finish within 8 s" in last and "--timeout" in last, r.stderr


def test_autotuned_choice_keeps_its_warps_and_stages():
    """The baseline is the autotuner's whole choice: a 128x128 tile launched at the default 4 warps
    spills and ran 6x slower than the original launcher on the GPU."""
    from types import SimpleNamespace

    import triton
    import triton.language as tl

    from kernelopt.worker.capture import capture_triton

    @triton.autotune(configs=[triton.Config({"B": 32}, num_warps=4, num_stages=2),
                              triton.Config({"B": 128}, num_warps=8, num_stages=4)], key=["n"])
    @triton.jit
    def tuned(x, n, B: tl.constexpr):
        pass

    tuned.best_config = tuned.configs[1]
    trace = SimpleNamespace(launches=[SimpleNamespace(global_name="tuned")])
    per_launch, per_kernel = capture_triton._autotuned_configs({"tuned": tuned}, trace)
    assert per_launch[0] == {"B": 128, "num_warps": 8, "num_stages": 4}
    assert per_kernel["tuned"]["chosen"] == per_launch[0] and len(per_kernel["tuned"]["configs"]) == 2


def test_unit_strides_are_declared_constant_as_triton_specializes_them():
    """Triton's JIT turns an integer argument equal to 1 into a constant (unit strides become
    provably contiguous loads); the captured declaration must say the same, or the baseline is a
    slower kernel than the original (6x on the H200 for the tiled matmul)."""
    module = (CORPUS / "triton" / "matmul_bias_relu" / "module_0.py").read_text()
    for name in ("stride_ak", "stride_bn", "stride_cn"):
        assert f"'{name}': 'constexpr'" in module and f"'{name}': 1" in module
    assert "'stride_am': 'i32'" in module  # 128: divisible by 16, not a constant
    # Still passed at the launch, as Inductor passes equal-to-1 arguments.
    assert "triton_matmul_bias_relu_kernel_0.run(arg0_1, arg1_1, arg2_1, buf0, 128, 128, 128, 128, 1," in module
