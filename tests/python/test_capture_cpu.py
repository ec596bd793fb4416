"""Capture on CPU: bundle contents, argument mapping, and error handling.

Inductor compiles C++ on CPU, but the wrapper module and the recording hook are
the same as with Triton on a GPU. Captures are few and shared (module fixtures)
because each one costs seconds of compilation.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kernelopt.worker.capture import capture as cap

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = REPO / "examples" / "problems"
KINDS = {"parameter", "buffer", "input", "intermediate", "scalar", "other"}


def _strict_json(path):
    def reject(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(Path(path).read_text(), parse_constant=reject)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Capture three problems; the graph-break one over a stale dir with force=True."""
    root = tmp_path_factory.mktemp("bundles")
    stale = root / "graph_break"
    stale.mkdir()
    (stale / "stale.txt").write_text("old")
    out = {}
    for name, force in [("linear_gelu", False), ("conv_bn_relu", False), ("graph_break", True)]:
        cap.capture(PROBLEMS / f"{name}.py", root / name, device="cpu", force=force)
        out[name] = root / name
    return out


def _meta(bundle):
    return _strict_json(bundle / "meta.json")


def test_bundle_files_and_meta(bundles):
    for name, bundle in bundles.items():
        meta = _meta(bundle)
        assert meta["format"] == "kernelopt-bundle" and meta["format_version"] == 1
        assert meta["problem_name"] == f"{name}.py" and meta["device"] == "cpu" and meta["gpu"] is None
        assert meta["mode"] == "default" and meta["seed"] == 0 and meta["dtype"] is None
        assert meta["versions"]["torch"] == torch.__version__
        assert (bundle / "problem.py").read_bytes() == (PROBLEMS / f"{name}.py").read_bytes()
        expected = {"problem.py", "meta.json"} | {g["module"] for g in meta["graphs"]}
        assert {p.name for p in bundle.iterdir()} == expected
        assert meta["eager_vs_compiled"]["max_rel"] < 1e-4
        assert meta["outputs"] and meta["capture_seconds"] > 0


def test_every_arg_has_a_kind(bundles):
    for bundle in bundles.values():
        for graph in _meta(bundle)["graphs"]:
            assert [a["index"] for a in graph["args"]] == list(range(len(graph["args"])))
            for arg in graph["args"]:
                assert arg["kind"] in KINDS
                if arg["kind"] in ("parameter", "buffer"):
                    assert arg["name"]
                if arg["kind"] == "input":
                    assert isinstance(arg["input_index"], int)


def test_linear_args_map_to_parameter_names(bundles):
    (graph,) = _meta(bundles["linear_gelu"])["graphs"]
    by_name = {a.get("name", a.get("input_index")): a for a in graph["args"]}
    assert by_name["fc.weight"]["kind"] == "parameter" and by_name["fc.weight"]["shape"] == [256, 256]
    assert by_name["fc.bias"]["kind"] == "parameter" and by_name["fc.bias"]["shape"] == [256]
    assert by_name[0]["kind"] == "input" and by_name[0]["shape"] == [128, 256]
    assert graph["outputs"] == [{"shape": [128, 256], "stride": [256, 1], "dtype": "float32"}]


def test_batchnorm_statistics_map_to_buffers(bundles):
    (graph,) = _meta(bundles["conv_bn_relu"])["graphs"]
    buffers = {a["name"] for a in graph["args"] if a["kind"] == "buffer"}
    assert {"bn.running_mean", "bn.running_var"} <= buffers


def test_graph_break_gives_two_graphs_and_replaces_stale_dir(bundles):
    meta = _meta(bundles["graph_break"])
    assert len(meta["graphs"]) >= 2
    assert not (bundles["graph_break"] / "stale.txt").exists()
    second = meta["graphs"][1]["args"]
    assert any(a["kind"] == "intermediate" for a in second)  # h, made by the first graph
    assert any(a["kind"] == "input" and a["input_index"] == 0 for a in second)  # x, reused after the break


def test_modules_are_inductor_output_byte_for_byte(bundles):
    from torch._inductor.codecache import PyCodeCache

    generated = {Path(m.__file__).read_bytes() for m in PyCodeCache.modules if getattr(m, "__file__", None)}
    for bundle in bundles.values():
        for graph in _meta(bundle)["graphs"]:
            assert (bundle / graph["module"]).read_bytes() in generated


def test_build_problem_is_reproducible():
    (m1, x1, _), (m2, x2, _) = (cap.build_problem(PROBLEMS / "linear_gelu.py", seed=3) for _ in range(2))
    assert torch.equal(m1.fc.weight, m2.fc.weight) and torch.equal(x1[0], x2[0])
    m3, x3, _ = cap.build_problem(PROBLEMS / "linear_gelu.py", seed=4)
    assert not torch.equal(m1.fc.weight, m3.fc.weight)
    m4, x4, _ = cap.build_problem(PROBLEMS / "linear_gelu.py", seed=3, dtype=torch.bfloat16)
    assert m4.fc.weight.dtype == x4[0].dtype == torch.bfloat16


def test_missing_problem_file_exits_2_with_one_line(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop("KERNELOPT_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "kernelopt.worker.capture", str(tmp_path / "nope.py"), "--out", str(out), "--device", "cpu"],
        capture_output=True, text=True, env=env,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelopt capture: error: problem file") and "not found" in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "source, extra, message",
    [
        ("x = 1\n", [], "lacks Model, get_inputs, get_init_inputs"),
        ("raise RuntimeError('broken on purpose')\n", [], "fails to import: RuntimeError: broken on purpose"),
        (None, ["--mode", "reduce-overhead"], "use --mode max-autotune-no-cudagraphs"),
        (
            "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x @ x\n"
            "def get_inputs():\n    return [torch.randn(2, 3)]\ndef get_init_inputs():\n    return []\n",
            [],
            "torch.compile failed",
        ),
    ],
)
def test_errors_exit_2_and_write_nothing(tmp_path, capsys, monkeypatch, source, extra, message):
    monkeypatch.delenv("KERNELOPT_DEBUG", raising=False)
    problem = tmp_path / "problem.py"
    if source is None:
        problem = PROBLEMS / "matmul.py"
    else:
        problem.write_text(source)
    before = set(tmp_path.iterdir())
    assert cap.main([str(problem), "--out", str(tmp_path / "out"), "--device", "cpu", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kernelopt capture: error: ") and message in err[0]
    assert set(tmp_path.iterdir()) == before


def test_existing_out_dir_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert cap.main([str(PROBLEMS / "matmul.py"), "--out", str(out), "--device", "cpu"]) == 2
    assert "--force" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_no_autotune_cache_is_an_inductor_patch_recorded_in_meta(bundles, tmp_path):
    """`kernelopt bench` captures ahead with the autotune cache off (its loader times launch configs
    itself); the patch reaches Inductor and the bundle says so. A plain capture leaves it alone."""
    assert "autotune_local_cache" not in _meta(bundles["linear_gelu"])["inductor_config"]
    cap.capture(PROBLEMS / "linear_gelu.py", tmp_path / "b", device="cpu", autotune_cache=False)
    assert _meta(tmp_path / "b")["inductor_config"]["autotune_local_cache"] is False


def test_triton_kernels_on_the_cpu_run_in_the_interpreter_and_optimize(kernelopt_bin, tmp_path):
    """`--cpu-kernels triton`: Inductor's Triton backend for CPU tensors (kernels as a GPU capture holds them,
    run by Triton's interpreter), a bundle `kernelopt optimize --device cpu` takes; the C++ default unchanged."""
    out = tmp_path / "b"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([kernelopt_bin, "capture", str(PROBLEMS / "linear_gelu.py"), "--out", str(out), "--device",
                        "cpu", "--cpu-kernels", "triton", "-q"], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    assert "C++ kernels" not in r.stderr  # the warning is for the C++ backend only
    meta = _meta(out)
    assert meta["device"] == "cpu" and meta["cpu_kernels"] == "triton" and meta["inductor_config"]["cpu_backend"] == "triton"
    assert meta["eager_vs_compiled"]["max_rel"] < 1e-4
    module = (out / "module_0.py").read_text()
    assert "@triton.jit" in module and "cpp_fused" not in module and "extern_kernels" in module
    o = subprocess.run([kernelopt_bin, "optimize", str(out), "--device", "cpu", "--out", str(tmp_path / "o"),
                        "--budget", "60", "-q"], capture_output=True, text=True, timeout=900,
                       env=dict(env, KERNELOPT_DB=str(tmp_path / "r.db")))
    assert o.returncode == 0, o.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["summary"]["kernels"] >= 1 and report["summary"]["candidates"] > 0, report["summary"]
    if report["summary"]["accepted"]:  # the re-stitched model checked against the baseline
        assert report["module"]["end_to_end"]["evidence"]["correctness"]["vs_baseline_max_rel"] < 1e-4


def test_triton_kernels_are_a_cpu_choice(tmp_path, capsys):
    assert cap.main([str(PROBLEMS / "matmul.py"), "--out", str(tmp_path / "out"), "--cpu-kernels", "triton"]) == 2
    err = capsys.readouterr().err
    assert "--cpu-kernels triton applies to --device cpu" in err and "drop --cpu-kernels" in err


def test_an_infinite_eager_difference_is_written_and_replied_as_strict_json(tmp_path):
    """A product that overflows on one side only (eager fp16 inf, compiled finite) makes the
    capture's sanity difference infinite: the bundle and the worker's reply are still strict JSON
    (the engine's parser refuses Infinity), carrying it as "inf"."""
    from kernelopt.worker.capture import capture_common
    from kernelopt.worker.protocol import reply_line

    eager = torch.tensor([1.0, float("inf"), 3.0], dtype=torch.float16)
    compiled = torch.tensor([1.0, 60000.0, 3.0], dtype=torch.float16)
    diff = cap._compare(eager, compiled)
    assert diff["max_abs"] == float("inf")
    problem = tmp_path / "p.py"
    problem.write_text("# a problem\n")
    capture_common._write_bundle(tmp_path / "b", False, problem, ["# module\n"],
                                 {"eager_vs_compiled": diff, "graphs": []})
    assert _strict_json(tmp_path / "b" / "meta.json")["eager_vs_compiled"]["max_abs"] == "inf"
    line = reply_line({"id": 3, "ok": True, "eager_vs_compiled": diff, "ms": [float("nan"), 1.5]})
    reply = json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    assert reply["eager_vs_compiled"]["max_abs"] == "inf" and reply["ms"] == ["nan", 1.5]
    assert json.loads(reply_line({"id": 4, "ok": True, "x": 2.5})) == {"id": 4, "ok": True, "x": 2.5}
