"""The engine's command line on real corpus bundles: inspect (table and JSON),
stitch, and every kind of bad input giving one line that names the problem,
exit code 2, and nothing written."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import time

import pytest
from conftest import CORPUS, ROOT, corpus_bundles


def run(binary, *args, **kw):
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120, **kw)


def one_error_line(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("kernelopt: error: "), lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("bundle", corpus_bundles(), ids=lambda p: p.name)
def test_inspect_json_every_bundle(kernelopt_bin, bundle):
    r = run(kernelopt_bin, "inspect", bundle, "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)  # exactly one JSON object
    meta = json.loads((bundle / "meta.json").read_text())
    assert len(j["graphs"]) == len(meta["graphs"])
    for k in j["kernels"]:
        assert k["name"].startswith("triton_") and k["kind"] and k["launches"] >= 1
    for e in j["extern_calls"]:
        assert e["op"].startswith(("extern_kernels.", "torch.", "aten."))
    # Every kernel declared in the module text appears, and only those.
    declared = sum((bundle / g["module"]).read_text().count("= async_compile.triton(") for g in meta["graphs"])
    assert len(j["kernels"]) == declared


def test_inspect_table(kernelopt_bin):
    r = run(kernelopt_bin, "inspect", CORPUS / "linear_gelu")
    assert r.returncode == 0, r.stderr
    assert "extern_kernels.mm" in r.stdout and "pointwise" in r.stdout
    assert "parameter fc.weight" in r.stdout or "parameter" in r.stdout


def test_inspect_lists_regions_with_their_internal_buffers(kernelopt_bin):
    # reverse_cumsum: the flipped scan writes buf0, the flip reads it and writes the output: one region,
    # buf0 internal; its one-pass floor reads the 64x1024 fp32 input once and writes the output once.
    j = json.loads(run(kernelopt_bin, "inspect", CORPUS / "reverse_cumsum", "--json").stdout)
    (region,) = j["graphs"][0]["regions"]
    assert len(region["kernels"]) == 2
    assert [b["name"] for b in region["internal"]] == ["buf0"]
    assert region["floor_bytes"] == 2 * 64 * 1024 * 4 and region["internal_bytes"] == 64 * 1024 * 4
    table = run(kernelopt_bin, "inspect", CORPUS / "conv_bn_relu").stdout
    assert "regions (2):" in table
    # The built-in coder's fusion of the region: the flip folded into the scan; the prologue declined.
    table = run(kernelopt_bin, "inspect", CORPUS / "reverse_cumsum").stdout
    assert "fusion r1 fusion:epilogue: fold triton_poi_fused_flip_1 into triton_per_fused_cumsum_flip_0's store" in table
    assert "declined: prologue" in table and "not pointwise" in table


def test_inspect_source_writes_a_kernel_as_a_candidate_file_the_stitcher_takes(kernelopt_bin, tmp_path):
    # graph_break has two graphs: the kernel is found in whichever holds it.
    j = json.loads(run(kernelopt_bin, "inspect", CORPUS / "graph_break", "--json").stdout)
    k = j["kernels"][-1]
    module = CORPUS / "graph_break" / j["meta"]["graphs"][k["graph"]]["module"]
    out = tmp_path / "k.py"
    r = run(kernelopt_bin, "inspect", CORPUS / "graph_break", "--source", k["name"], "-o", out)
    assert r.returncode == 0 and r.stdout == "", r.stderr
    src = out.read_text()
    assert f"def {k['name']}(" in src and "@triton.jit" in src and "import triton" in src
    assert run(kernelopt_bin, "inspect", module, "--source", k["name"]).stdout == src  # a module too, to stdout
    # Stitched back unchanged, the module is byte-identical: the file is the kernel's own source.
    r = run(kernelopt_bin, "stitch", module, "--replace", f"{k['name']}={out}", "-o", tmp_path / "m.py")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.py").read_bytes() == module.read_bytes()


def test_inspect_source_errors_name_the_fix(kernelopt_bin, tmp_path):
    line = one_error_line(run(kernelopt_bin, "inspect", CORPUS / "softmax_lastdim", "--source", "triton_nope"),
                          "--source triton_nope: no such kernel", "its kernels: triton_per_fused__softmax")
    assert "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0" in line
    one_error_line(run(kernelopt_bin, "inspect", CORPUS / "softmax_lastdim", "-o", tmp_path / "x.py"), "add --source")
    assert not (tmp_path / "x.py").exists()


def test_stitch_identity_and_replacement(kernelopt_bin, tmp_path):
    module = CORPUS / "softmax_lastdim" / "module_0.py"
    r = run(kernelopt_bin, "stitch", module)
    assert r.returncode == 0 and r.stdout == module.read_text()
    j = json.loads(run(kernelopt_bin, "inspect", module, "--json").stdout)
    name = j["kernels"][0]["name"]
    # A replacement: the same kernel with one more comment line; only the literal changes.
    src = module.read_text()
    start = src.index("async_compile.triton('%s', '''" % name) + len("async_compile.triton('%s', '''" % name)
    end = src.index("'''", start)
    kernel = src[start:end] + "# tuned by kernelopt\n"
    kfile = tmp_path / "k.py"
    kfile.write_text(kernel)
    out = tmp_path / "out.py"
    r = run(kernelopt_bin, "stitch", module, "--replace", f"{name}={kfile}", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == src[:start] + kernel + src[end:]


def test_stitch_refuses_other_kernel(kernelopt_bin, tmp_path):
    module = CORPUS / "softmax_lastdim" / "module_0.py"
    name = json.loads(run(kernelopt_bin, "inspect", module, "--json").stdout)["kernels"][0]["name"]
    k = tmp_path / "k.py"
    k.write_text("import triton\n@triton.jit\ndef other_kernel(x):\n    pass\n")
    out = tmp_path / "out.py"
    one_error_line(run(kernelopt_bin, "stitch", module, "--replace", f"{name}={k}", "-o", out), "other", name)
    assert not out.exists()
    one_error_line(run(kernelopt_bin, "stitch", module, "--replace", f"nope={k}"), "no kernel of that name")
    one_error_line(run(kernelopt_bin, "stitch", module, "--replace", "missing-equals"), "NAME=KERNEL.py")


def test_not_an_inductor_module(kernelopt_bin, tmp_path):
    f = tmp_path / "plain.py"
    f.write_text("import os\nprint(os.getcwd())\n")
    one_error_line(run(kernelopt_bin, "inspect", f), f"{f}:1:1: not an Inductor output module")


def test_truncated_module(kernelopt_bin, tmp_path):
    src = (CORPUS / "layer_norm" / "module_0.py").read_text()
    f = tmp_path / "cut.py"
    f.write_text(src[: src.index("@triton.jit") + 20])  # inside a triple-quoted kernel string
    line = one_error_line(run(kernelopt_bin, "inspect", f), str(f), "unterminated triple-quoted string")
    assert line.split(":")[3].isdigit()  # file:line:col


def test_non_utf8(kernelopt_bin, tmp_path):
    f = tmp_path / "bin.py"
    f.write_bytes(b"x = 1\ny = '\xff\xfe'\n")
    one_error_line(run(kernelopt_bin, "inspect", f), f"{f}:2:")


def test_unknown_decorator_kind(kernelopt_bin, tmp_path):
    src = (CORPUS / "softmax_lastdim" / "module_0.py").read_text()
    assert "@triton_heuristics.persistent_reduction(" in src
    f = tmp_path / "m.py"
    f.write_text(src.replace("@triton_heuristics.persistent_reduction(", "@triton_heuristics.quantum_reduction(", 1))
    line_no = f.read_text()[: f.read_text().index("quantum")].count("\n") + 1
    one_error_line(run(kernelopt_bin, "inspect", f), f"{f}:{line_no}:", "triton_heuristics.quantum_reduction")


def test_bundle_missing_files(kernelopt_bin, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(CORPUS / "graph_break", b)
    (b / "module_1.py").unlink()
    one_error_line(run(kernelopt_bin, "inspect", b), "module_1.py", "missing module file")
    (b / "meta.json").unlink()
    one_error_line(run(kernelopt_bin, "inspect", b), "meta.json", "kernelopt capture")
    one_error_line(run(kernelopt_bin, "inspect", tmp_path / "nothing.py"), "cannot open")


def test_bundle_from_other_format(kernelopt_bin, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(CORPUS / "matmul", b)
    meta = json.loads((b / "meta.json").read_text())
    meta["format_version"] = 99
    (b / "meta.json").write_text(json.dumps(meta))
    one_error_line(run(kernelopt_bin, "inspect", b), "format_version 99")


def test_capture_bad_problem_through_engine(kernelopt_bin, tmp_path):
    out = tmp_path / "bundle"
    r = run(kernelopt_bin, "capture", tmp_path / "missing.py", "--out", out, "--device", "cpu")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


def test_usage_errors(kernelopt_bin):
    assert run(kernelopt_bin).returncode == 2
    assert run(kernelopt_bin, "frobnicate").returncode == 2
    r = run(kernelopt_bin, "--version")
    assert r.returncode == 0 and r.stdout.startswith("kernelopt ")


def test_profile_cpu_mode(kernelopt_bin, tmp_path):
    env = dict(os.environ, KERNELOPT_DB=str(tmp_path / "r.db"))
    r = run(kernelopt_bin, "profile", CORPUS / "layer_norm", "--device", "cpu", "--json", "-q", env=env)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["baseline"]["match"] is True
    assert j["profile"]["measured"] is False  # CPU times are never reported
    assert (tmp_path / "r.db").exists()


def test_profile_errors(kernelopt_bin, tmp_path):
    one_error_line(run(kernelopt_bin, "profile", tmp_path / "none", "--device", "cpu"), "meta.json")
    env = dict(os.environ, KERNELOPT_PYTHON=str(tmp_path / "no-python"), KERNELOPT_DB=str(tmp_path / "r.db"))
    one_error_line(run(kernelopt_bin, "profile", CORPUS / "layer_norm", "--device", "cpu", "-q", env=env),
                   "KERNELOPT_PYTHON")


def _cli_env(tmp_path, **extra):
    # The worker must come from this checkout, whatever kernelopt is installed elsewhere.
    return dict(os.environ, KERNELOPT_DB=str(tmp_path / "r.db"), PYTHONPATH=str(ROOT / "python"), **extra)


def test_profile_needs_a_gpu_unless_cpu(kernelopt_bin, tmp_path):
    env = _cli_env(tmp_path, CUDA_VISIBLE_DEVICES="")
    one_error_line(run(kernelopt_bin, "profile", CORPUS / "layer_norm", "-q", env=env), "no CUDA GPU", "--device cpu")


def test_profile_meta_mismatch_names_the_argument(kernelopt_bin, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(CORPUS / "layer_norm", b)
    meta = json.loads((b / "meta.json").read_text())
    meta["graphs"][0]["args"][0]["shape"][0] += 1
    (b / "meta.json").write_text(json.dumps(meta))
    one_error_line(run(kernelopt_bin, "profile", b, "--device", "cpu", "-q", env=_cli_env(tmp_path)),
                   "graph 0 argument 0", "recapture")


def _profile_with_its_worker(kernelopt_bin, tmp_path, stderr):
    """A CPU-mode `profile` run, once its worker is running: (the process, the worker pids)."""
    p = subprocess.Popen([kernelopt_bin, "profile", str(CORPUS / "softmax_large"), "--device", "cpu", "-q"],
                         env=_cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=stderr, text=True)
    children = pathlib.Path(f"/proc/{p.pid}/task/{p.pid}/children")
    workers = []
    for _ in range(200):
        time.sleep(0.05)
        workers = children.read_text().split() if children.exists() else []
        if workers:
            break
    assert workers, "no worker started"
    return p, workers


def test_sigterm_leaves_no_worker_behind(kernelopt_bin, tmp_path):
    p, workers = _profile_with_its_worker(kernelopt_bin, tmp_path, subprocess.DEVNULL)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) != 0
    time.sleep(0.5)
    for w in workers:
        stat = pathlib.Path(f"/proc/{w}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z", f"worker {w} survived"


def test_a_crash_prints_a_backtrace_and_keeps_its_signal(kernelopt_bin, tmp_path):
    # The engine crashing (here: a SIGSEGV sent while it waits on its worker) says so on stderr with
    # the frames a bug report needs, then dies by the same signal, so callers see the usual status.
    p, _ = _profile_with_its_worker(kernelopt_bin, tmp_path, subprocess.PIPE)
    p.send_signal(signal.SIGSEGV)
    _, err = p.communicate(timeout=30)
    assert p.returncode == -signal.SIGSEGV, (p.returncode, err[-500:])
    assert "kernelopt: crashed (Segmentation fault); this is a bug" in err, err[-500:]
    assert "kernelopt(+0x" in err, err[-500:]  # the frames, as binary(+offset)
