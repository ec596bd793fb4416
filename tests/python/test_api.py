"""The Python API (docs/python_api.md): kernelopt.load() and kernelopt.backend().

CPU mode (CI): results are made here from corpus bundles (captured on an H200) the way
`kernelopt optimize` lays them out: baseline/ holds the captured modules, module_<i>.py the
"optimized" ones, with a real kernel replacement (a pinned launch config through
triton_heuristics.fixed_config) or a deliberately wrong kernel, which proves that what runs is
the result's module and not the baseline or the eager model.

On a CPU Inductor emits C++, which can never match a GPU result: backend() is tested here through
its matcher (on the bundles' own module text and perturbed copies), its apply step (a compile
whose generated module is the bundle's text, as on the GPU) and its fallback (a real CPU compile).

GPU tier, by hand on the H200 (the real Inductor runtime and a real match):
    KERNELOPT_TEST_DEVICE=cuda TRITON_INTERPRET=0 python -m pytest -q tests/python/test_api.py -k gpu
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import ast  # noqa: E402
import inspect  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from conftest import gpu_tier  # noqa: E402

import kernelopt  # noqa: E402
from kernelopt.api import ResultBackend, ResultError, match_module, normalize_module  # noqa: E402
from kernelopt.worker.bundle_runner import rebuild_problem  # noqa: E402
from kernelopt.worker.measure.launches import kernel_decls  # noqa: E402
from kernelopt.worker.runtime.cpu_runtime import load_module  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
TOL = dict(atol=1e-4, rtol=1e-4)  # the project's fp32 tolerance

gpu = gpu_tier


# ---------------------------------------------------------------- making results


def module_text(bundle: str, i: int = 0) -> str:
    return (CORPUS / bundle / f"module_{i}.py").read_text(encoding="utf-8")


def edit_kernel(text: str, var: str, edit) -> str:
    """The module with kernel `var`'s source replaced by edit(source); every other byte unchanged."""
    _, source = kernel_decls(text)[var]
    assert text.count(source) == 1, "the kernel source is not a plain literal in the module"
    return text.replace(source, edit(source))


def pin_config(config: dict):
    """An edit: the heuristics decorator becomes triton_heuristics.fixed_config(config=...), same metas."""

    def edit(source: str) -> str:
        fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))
        deco = fn.decorator_list[0]
        kw = {k.arg: ast.get_source_segment(source, k.value) for k in deco.keywords}
        fixed = (f"triton_heuristics.fixed_config(config={config!r}, filename=__file__, "
                 f"triton_meta={kw['triton_meta']}, inductor_meta={kw['inductor_meta']})")
        return source.replace(ast.get_source_segment(source, deco), fixed)

    return edit


def replace(old: str, new: str):
    def edit(source: str) -> str:
        assert source.count(old) == 1, old
        return source.replace(old, new)

    return edit


def make_result(tmp_path: Path, bundle: str, edits: dict) -> Path:
    """A result directory as `kernelopt optimize --out` writes it; edits: {graph: {kernel var: edit}}."""
    src, out = CORPUS / bundle, tmp_path / f"{bundle}_result"
    meta = json.loads((src / "meta.json").read_text())
    (out / "baseline").mkdir(parents=True)
    shutil.copyfile(src / "meta.json", out / "meta.json")
    shutil.copyfile(src / "problem.py", out / "problem.py")
    for i, graph in enumerate(meta["graphs"]):
        text = (src / graph["module"]).read_text(encoding="utf-8")
        (out / "baseline" / graph["module"]).write_text(text, encoding="utf-8")
        for var, edit in edits.get(i, {}).items():
            text = edit_kernel(text, var, edit)
        (out / graph["module"]).write_text(text, encoding="utf-8")
    return out


SOFTMAX = "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0"
GELU = "triton_poi_fused_add_gelu_mul_0"
GB_GELU = "triton_poi_fused_addmm_gelu_0"
GB_NORM = "triton_per_fused__softmax_add_exp_native_layer_norm_prepare_softmax_online_sub_0"
WRONG_GELU = replace("tmp12 = tmp10 + tmp11", "tmp12 = tmp10 - tmp11")  # gelu(x) * 0.75 - bias


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("results")
    return {
        "softmax_pinned": make_result(tmp, "softmax_lastdim", {0: {SOFTMAX: pin_config(
            {"XBLOCK": 8, "num_warps": 4, "num_stages": 1})}}),
        "gelu_wrong": make_result(tmp / "w", "gelu_scale", {0: {GELU: WRONG_GELU}}),
        "graph_break": make_result(tmp, "graph_break", {
            0: {GB_GELU: pin_config({"XBLOCK": 1024, "num_warps": 4, "num_stages": 1})},
            1: {GB_NORM: pin_config({"XBLOCK": 8, "num_warps": 4, "num_stages": 1})}}),
        # graph 0's GELU without its bias add: the first half is wrong, the second runs on it
        "graph_break_wrong": make_result(tmp / "w", "graph_break", {
            0: {GB_GELU: replace("tmp2 = tmp0 + tmp1", "tmp2 = tmp1")}}),
    }


def problem(result: Path, device: str = "cpu"):
    return rebuild_problem(result, device)


# ---------------------------------------------------------------- load()


def test_load_single_graph_runs_the_optimized_module_and_matches_eager(results):
    model, inputs = problem(results["softmax_pinned"])
    run = kernelopt.load(results["softmax_pinned"], model, device="cpu")
    got = run(*inputs)
    torch.testing.assert_close(got, model(*inputs), **TOL)
    assert run.path == "direct"
    # the module that ran is the result's: its kernel has the pinned config, the baseline's autotunes
    assert getattr(run.modules[0], SOFTMAX).kind == "fixed_config"
    # a keyword call binds to the same input; not compared bit for bit with `got`: the interpreter's numpy
    # reductions are not bitwise reproducible from call to call (CI saw a first call differ by 1 ulp)
    torch.testing.assert_close(run(x=inputs[0]), model(*inputs), **TOL)


def test_a_keyword_call_runs_the_results_module_too(results):
    model, inputs = problem(results["gelu_wrong"])
    run = kernelopt.load(results["gelu_wrong"], model, device="cpu")
    (x,) = inputs
    got = run(x=x)  # the wrong kernel's output proves the keyword call ran the result's module
    assert (got - model(x)).abs().max() > 0.1
    torch.testing.assert_close(got, F.gelu(x) * model.scale - model.bias, **TOL)


def test_a_wrong_optimized_kernel_changes_the_output(results):
    model, inputs = problem(results["gelu_wrong"])
    got = kernelopt.load(results["gelu_wrong"], model, device="cpu")(*inputs)
    (x,) = inputs
    assert (got - model(x)).abs().max() > 0.1  # not the eager model, not the baseline module
    torch.testing.assert_close(got, F.gelu(x) * model.scale - model.bias, **TOL)


def test_multi_graph_result_goes_through_torch_compile(results):
    model, inputs = problem(results["graph_break"])
    run = kernelopt.load(results["graph_break"], model, device="cpu")
    torch.testing.assert_close(run(*inputs), model(*inputs), **TOL)
    assert run.path == "compiled"
    torch.testing.assert_close(run(*inputs), model(*inputs), **TOL)  # second call: compiled once

    model, inputs = problem(results["graph_break_wrong"])
    (x,) = inputs
    got = kernelopt.load(results["graph_break_wrong"], model, device="cpu")(x)
    h = F.gelu(x @ model.fc.weight.T)  # graph 0 without its bias add, graph 1 as written
    torch.testing.assert_close(got, torch.softmax(model.norm(h) + x, dim=-1), **TOL)
    assert (got - model(x)).abs().max() > 1e-3


def with_dict_output(model, extra: dict):
    """The same model (same parameters, same graph) returning {"y": output, **extra}."""
    base = type(model)

    class DictModel(base):
        def forward(self, x):
            return {"y": base.forward(self, x), **extra}

    model.__class__ = DictModel
    return model


def test_output_structure_is_the_models(results, caplog):
    model, inputs = problem(results["softmax_pinned"])
    want = model(*inputs)
    with caplog.at_level(logging.WARNING, logger="kernelopt"):
        run = kernelopt.load(results["softmax_pinned"], with_dict_output(model, {}), device="cpu")
    assert "differs from Model.forward" in caplog.text  # load() says that it trusts the model
    got = run(*inputs)
    assert run.path == "direct" and set(got) == {"y"}
    torch.testing.assert_close(got["y"], want, **TOL)

    model, inputs = problem(results["graph_break"])
    want = model(*inputs)
    run = kernelopt.load(results["graph_break"], with_dict_output(model, {"note": "kept"}), device="cpu")
    got = run(*inputs)
    assert run.path == "compiled" and got["note"] == "kept"
    torch.testing.assert_close(got["y"], want, **TOL)


def problem_with_docstring(docstring: str, body: str) -> str:
    """softmax_lastdim's problem file, its Model.forward documented by `docstring` (lines as written)."""
    text = (CORPUS / "softmax_lastdim" / "problem.py").read_text(encoding="utf-8")
    old = "    def forward(self, x):\n        return torch.softmax(x, dim=-1)\n"
    assert text.count(old) == 1
    return text.replace(old, f"    def forward(self, x):\n{docstring}        {body}\n")


def model_from(problem_file: Path) -> torch.nn.Module:
    """The Model of another problem file (an import under its own name), in eval mode."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"other_{problem_file.stem}", problem_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Model(*mod.get_init_inputs()).eval()


# A forward's multi-line docstring as written in the wild. textwrap.dedent of the def's source
# turned the first's whitespace-only line into an empty one (a false "differs"), and could not
# dedent the second (a line indented less than the def), so no change of that forward was reported.
DOCSTRINGS = {
    "blank_line_indented": '        """Softmax over the last dimension.\n        \n        Rows of 512.\n        """\n',
    "line_left_of_def": '        """Softmax over the last dimension.\n\n  Rows of 512.\n"""\n',
}


@pytest.mark.parametrize("doc", sorted(DOCSTRINGS))
def test_forward_with_a_multiline_docstring_is_compared_as_written(tmp_path, caplog, doc):
    result = make_result(tmp_path, "softmax_lastdim", {})
    same = problem_with_docstring(DOCSTRINGS[doc], "return torch.softmax(x, dim=-1)")
    (result / "problem.py").write_text(same, encoding="utf-8")
    model, inputs = problem(result)  # the problem's own Model, imported from the result's problem.py
    with caplog.at_level(logging.WARNING, logger="kernelopt"):
        run = kernelopt.load(result, model, device="cpu")
    assert "differs from Model.forward" not in caplog.text
    torch.testing.assert_close(run(*inputs), model(*inputs), **TOL)

    # a forward that truly changed, same docstring: still reported
    changed = tmp_path / "changed.py"
    changed.write_text(problem_with_docstring(DOCSTRINGS[doc], "return torch.softmax(x, dim=1)"), encoding="utf-8")
    # the same code in another file, only the docstring reworded: a docstring computes nothing
    reworded = tmp_path / "reworded.py"
    reworded.write_text(problem_with_docstring('        """Another wording."""\n', "return torch.softmax(x, dim=-1)"),
                        encoding="utf-8")
    for path, warns in ((changed, True), (reworded, False)):
        caplog.clear()
        other = model_from(path)
        with caplog.at_level(logging.WARNING, logger="kernelopt"):
            kernelopt.load(result, other, device="cpu")
        assert ("Model.forward differs from Model.forward" in caplog.text) == warns, (path.name, caplog.text)


# ---------------------------------------------------------------- load() errors


def test_bad_directories(tmp_path, results):
    model, _ = problem(results["softmax_pinned"])
    with pytest.raises(FileNotFoundError, match="does not exist; pass the --out directory"):
        kernelopt.load(tmp_path / "nope", model, device="cpu")
    with pytest.raises(ValueError, match="no meta.json"):
        kernelopt.load(tmp_path, model, device="cpu")
    (tmp_path / "meta.json").write_text('{"format": "something-else"}')
    with pytest.raises(ValueError, match="not a kernelopt bundle"):
        kernelopt.load(tmp_path, model, device="cpu")

    broken = tmp_path / "broken"
    shutil.copytree(results["softmax_pinned"], broken)
    (broken / "module_0.py").unlink()
    with pytest.raises(FileNotFoundError, match="module_0.py is missing"):
        kernelopt.load(broken, model, device="cpu")
    # a module that differs from its baseline outside the kernels is not an optimized module of it
    text = (results["softmax_pinned"] / "module_0.py").read_text()
    (broken / "module_0.py").write_text(text.replace("buf2 = empty_strided_cuda", "buf2 = empty_strided_cpu"))
    with pytest.raises(ResultError, match="outside its Triton kernels"):
        kernelopt.load(broken, model, device="cpu")


def test_a_model_that_does_not_match(results):
    result = results["graph_break"]
    other, _ = rebuild_problem(CORPUS / "softmax_lastdim", "cpu")
    with pytest.raises(ResultError, match="no parameter 'fc.weight'"):
        kernelopt.load(result, other, device="cpu")
    import importlib.util

    spec = importlib.util.spec_from_file_location("gb_problem", result / "problem.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(ResultError, match=r"fc.weight' is float32\[64, 64\].*\[128, 128\]"):
        kernelopt.load(result, mod.Model(64).eval(), device="cpu")
    model, _ = problem(result)
    with pytest.raises(ResultError, match="float64.*pass the model the result was optimized for"):
        kernelopt.load(result, model.double(), device="cpu")
    with pytest.raises(ResultError, match="training mode.*model.eval"):
        kernelopt.load(result, mod.Model(128).train(), device="cpu")
    with pytest.raises(ResultError, match="not a torch.nn.Module"):
        kernelopt.load(result, lambda x: x, device="cpu")


def test_wrong_inputs(results, caplog):
    model, (x,) = problem(results["softmax_pinned"])
    run = kernelopt.load(results["softmax_pinned"], model, device="cpu")
    with pytest.raises(ResultError, match=r"wrong number of inputs: got 0, the result was optimized for 1"):
        run()
    with pytest.raises(ResultError, match=r"wrong number of inputs: got 2"):
        run(x, x)
    with pytest.raises(ResultError, match=r"input 0 \(x\) is float32\[64, 512\].*float32\[128, 512\].*kernelopt optimize"):
        run(x[:64])
    with pytest.raises(ResultError, match=r"is float64\[128, 512\]"):
        run(x.double())
    with pytest.raises(ResultError, match=r"has strides \[1, 128\].*contiguous"):
        run(x.t().contiguous().t())
    with pytest.raises(ResultError, match=r"optimized for a tensor"):
        run(3.0)

    # parameters of forward beyond the recorded inputs must keep their defaults, as at capture
    base = type(model)

    class WithOption(base):
        def forward(self, x, temperature=None):
            return base.forward(self, x if temperature is None else x / temperature)

    optional = kernelopt.load(results["softmax_pinned"], WithOption().eval(), device="cpu")
    want = torch.softmax(x, -1)
    for call in (lambda: optional(x), lambda: optional(x, None), lambda: optional(x=x, temperature=None)):
        torch.testing.assert_close(call(), want, **TOL)
    with pytest.raises(ResultError, match="temperature not among them"):
        optional(x, 2.0)

    forgiving = kernelopt.load(results["softmax_pinned"], model, device="cpu", fallback=True)
    with caplog.at_level(logging.WARNING, logger="kernelopt"):
        small = forgiving(x[:64])
    torch.testing.assert_close(small, torch.softmax(x[:64], -1), rtol=0, atol=0)  # the model's own forward
    assert "running the model's own forward (fallback=True)" in caplog.text
    assert forgiving.path is None  # nothing of the result ran


def test_device_errors(results):
    model, _ = problem(results["softmax_pinned"])
    with pytest.raises(ResultError, match="unknown device"):
        kernelopt.load(results["softmax_pinned"], model, device="gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(ResultError, match="no CUDA GPU is visible.*device='cpu'"):
            kernelopt.load(results["softmax_pinned"], model, device="cuda")


# ---------------------------------------------------------------- backend(): matching


def test_matcher_accepts_the_same_program_and_rejects_a_perturbed_one():
    text = module_text("gelu_scale")
    assert match_module(text, [text])[0] == 0
    # what differs between two compiles of the same graph: comments (AOT ID counts earlier
    # compiles, the kernel path names the cache dir), blank lines, the Triton installation's
    # backend_hash (these two values were seen on the same H200 in two processes)
    volatile = (text.replace("# AOT ID: ['0_inference']", "# AOT ID: ['7_inference']")
                .replace("/tmp/torchinductor_root/", "/home/ci/.cache/inductor/")
                .replace("'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336'",
                         "'backend_hash': 'B01020984EF46027F076428F681AC854C238F082A1ADAFC2BE66262A647F68FA'")
                .replace("async_compile.wait(globals())", "\n\nasync_compile.wait(globals())  # done"))
    assert volatile != text and match_module(volatile, [text])[0] == 0

    perturbed = {
        "kernel constant": text.replace("tl.full([1], 0.75, tl.float32)", "tl.full([1], 0.76, tl.float32)"),
        "kernel config": text.replace("'num_load': 2", "'num_load': 3"),
        "call()": text.replace("assert_size_stride(arg1_1, (256, ), (1, ))", "assert_size_stride(arg1_1, (256, ), (2, ))"),
        "launch": text.replace("arg0_1, arg1_1, buf0, 65536", "arg1_1, arg0_1, buf0, 65536"),
        "device": text.replace("multi_processor_count=132", "multi_processor_count=108"),
    }
    for what, other in perturbed.items():
        assert other != text, what
        index, why = match_module(other, [text])
        assert index is None, what
        assert "matches no graph" in why and "line" in why, why

    # several graphs: the right one is found, and the backend's normalized baselines work alike
    gb = [module_text("graph_break", 0), module_text("graph_break", 1)]
    assert match_module(gb[1], gb)[0] == 1
    assert match_module(gb[0], [normalize_module(t) for t in gb])[0] == 0
    assert match_module(text, gb)[0] is None


def _as_if_generated(texts: list[str], wrap=None, seen: list | None = None):
    """compile_inner for ResultBackend: real Inductor (C++ on this CPU), then its module replaced by
    the bundle's text, as Inductor on the capture GPU generated it (run through CPU mode).
    wrap(call) wraps the module's call() as Inductor's post-compile steps may."""
    counter = itertools.count()

    def compile_inner(gm, example_inputs, **kwargs):
        compiled = ResultBackend.compile_inner(gm, example_inputs, **kwargs)
        k = next(counter)
        compiled.source_code = texts[k]
        call = load_module(texts[k], f"<generated {k}>", "cpu").call
        compiled.current_callable = wrap(call) if wrap else call
        if seen is not None:
            seen.append(compiled)
        return compiled

    return compile_inner


def realign(call):
    """Inductor's input realignment around call() (what the H200 showed around most modules)."""
    from torch._inductor.utils import align_inputs_from_check_idxs

    extra = [set()] if len(inspect.signature(align_inputs_from_check_idxs).parameters) > 2 else []
    return align_inputs_from_check_idxs(call, [0], *extra)


def unknown_wrapper(call):
    def cudagraph_like(args):
        return call(args)

    return cudagraph_like


@pytest.mark.parametrize("wrap", [None, realign, unknown_wrapper], ids=["plain", "realign", "unknown"])
def test_backend_applies_matching_graphs(results, caplog, wrap):
    result = results["gelu_wrong"]
    model, inputs = problem(result)
    (x,) = inputs
    wrong = F.gelu(x) * model.scale - model.bias  # what the result's module computes

    b, seen = kernelopt.backend(result), []
    b.compile_inner = _as_if_generated([module_text("gelu_scale")], wrap, seen)
    torch._dynamo.reset()
    with torch.no_grad(), caplog.at_level(logging.INFO, logger="kernelopt"):
        got = torch.compile(model, backend=b)(x)
    if wrap is unknown_wrapper:  # replacing the callable would drop the wrapper: keep Inductor's
        assert [d.applied for d in b.decisions] == [False] and "wrapped" in b.decisions[0].reason
        torch.testing.assert_close(got, model(x), **TOL)
        return
    assert [(d.applied, d.result_graph) for d in b.decisions] == [(True, 0)]
    assert "graph 0: applied" in caplog.text
    torch.testing.assert_close(got, wrong, **TOL)  # the result's module ran, not Inductor's
    if wrap is realign:  # the realignment wrapper is kept around the optimized call()
        assert seen[0].current_callable.__qualname__.endswith("align_inputs_from_check_idxs.<locals>.run")
        assert "realignment kept" in b.decisions[0].reason


def test_backend_keeps_inductors_module_when_the_generated_one_differs(results):
    result = results["gelu_wrong"]
    model, (x,) = problem(result)
    b = kernelopt.backend(result)
    perturbed = module_text("gelu_scale").replace("tl.full([1], 0.75, tl.float32)", "tl.full([1], 0.5, tl.float32)")
    b.compile_inner = _as_if_generated([perturbed])
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(model, backend=b)(x)
    assert [d.applied for d in b.decisions] == [False]
    assert "matches no graph" in b.decisions[0].reason and "0.5" in b.decisions[0].reason
    torch.testing.assert_close(got, F.gelu(x) * 0.5 + model.bias, **TOL)  # "Inductor's" module ran


def test_backend_falls_back_to_inductor_on_cpu(results, caplog):
    result = results["gelu_wrong"]
    model, inputs = problem(result)
    b = kernelopt.backend(result)
    torch._dynamo.reset()
    with torch.no_grad(), caplog.at_level(logging.INFO, logger="kernelopt"):
        got = torch.compile(model, backend=b)(*inputs)
    torch.testing.assert_close(got, model(*inputs), **TOL)  # Inductor's own (C++) module: correct
    assert [d.applied for d in b.decisions] == [False]
    assert "fell back to Inductor's module" in caplog.text and "matches no graph" in caplog.text


def test_the_named_backend_is_found_by_name_and_applies_the_result(results):
    # torch.compile(model, backend="kernelopt", options={"result": DIR}): the entry point in
    # pyproject.toml names api_backend.named_backend; one ResultBackend per result directory.
    from importlib.metadata import entry_points

    from kernelopt import api_backend

    assert [e.value for e in entry_points(group="torch_dynamo_backends") if e.name == "kernelopt"] == [
        "kernelopt.api_backend:named_backend"]
    result = results["gelu_wrong"]
    model, (x,) = problem(result)
    b = kernelopt.backend(result)
    b.compile_inner = _as_if_generated([module_text("gelu_scale")])
    api_backend._NAMED[Path(result).resolve()] = b  # as if made by the name, with Inductor stubbed
    try:
        torch._dynamo.reset()
        with torch.no_grad():
            got = torch.compile(model, backend="kernelopt", options={"result": str(result)})(x)
        assert [(d.applied, d.result_graph) for d in b.decisions] == [(True, 0)]
        torch.testing.assert_close(got, F.gelu(x) * model.scale - model.bias, **TOL)  # the result's module
    finally:
        api_backend._NAMED.clear()
    # Without the stub (CPU: Inductor writes C++): the name makes its own backend, which falls back.
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(model, backend="kernelopt", options={"result": str(result)})(x)
    torch.testing.assert_close(got, model(x), **TOL)
    made = api_backend.named_backend.backends[Path(result).resolve()]
    assert [d.applied for d in made.decisions] == [False]
    api_backend._NAMED.clear()


@pytest.mark.parametrize("options, says", [
    (None, 'needs options={"result": DIR}'),
    ({"result": "R", "mode": "max-autotune"}, "unknown option(s) ['mode']"),
])
def test_the_named_backend_refuses_missing_or_unknown_options(results, options, says):
    model, (x,) = problem(results["gelu_wrong"])
    torch._dynamo.reset()
    with pytest.raises(Exception) as err:
        torch.compile(model, backend="kernelopt", options=options)(x)
    assert says in str(err.value)


def test_import_kernelopt_stays_light():
    code = "import sys, kernelopt; assert 'torch' not in sys.modules and 'load' in dir(kernelopt)"
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))


# ---------------------------------------------------------------- GPU tier


@gpu
def test_gpu_load_runs_the_optimized_modules(results):
    for name in ("softmax_pinned", "graph_break"):
        model, inputs = problem(results[name], "cuda")
        run = kernelopt.load(results[name], model)
        assert run.device == "cuda"
        torch.testing.assert_close(run(*inputs), model(*inputs), **TOL)
    model, inputs = problem(results["gelu_wrong"], "cuda")
    got = kernelopt.load(results["gelu_wrong"], model)(*inputs)
    torch.testing.assert_close(got, F.gelu(inputs[0]) * model.scale - model.bias, **TOL)


@gpu
def test_gpu_backend_applies_where_inductor_generates_the_baseline(results, caplog):
    for name in ("graph_break_wrong", "gelu_wrong"):
        result = results[name]
        model, inputs = problem(result, "cuda")
        b = kernelopt.backend(result)
        torch._dynamo.reset()
        with torch.no_grad(), caplog.at_level(logging.INFO, logger="kernelopt"):
            got = torch.compile(model, backend=b)(*inputs)
        print(name, [(d.applied, d.reason) for d in b.decisions])
        assert all(d.applied for d in b.decisions), [d.reason for d in b.decisions]
        expected = kernelopt.load(result, model)(*inputs)
        torch.testing.assert_close(got, expected, **TOL)
        assert (got - model(*inputs)).abs().max() > 1e-3
