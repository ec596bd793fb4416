"""tools/dump_candidates.py and `kernelopt candidates` (issue 27's check that a refactoring step leaves the
candidates byte-identical): two dumps of the same bundles in CPU mode are identical and hold real kernel
sources, `--compare` names the kernel whose candidate changed, and bad input is one line with exit 2.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "dump_candidates.py"
BUNDLES = [ROOT / "corpus" / name for name in ("softmax_lastdim", "layer_norm", "max_pool2d")]


def tool(*args, binary):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args), "--bin", binary], capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def dumps(kernelopt_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("dumps")
    for name in ("a", "b"):
        r = tool(root / name, *BUNDLES, "--no-corpus", binary=kernelopt_bin)
        assert r.returncode == 0, r.stdout + r.stderr
    return root / "a", root / "b"


def test_two_dumps_are_identical_and_hold_each_kernels_candidates(dumps, kernelopt_bin):
    a, b = dumps
    r = tool("--compare", a, b, binary=kernelopt_bin)
    assert r.returncode == 0, r.stdout
    assert r.stdout.startswith("identical: 3 bundle(s)")
    files = lambda d: {p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()}  # noqa: E731
    assert files(a) == files(b)
    for bundle in BUNDLES:
        manifest = json.loads((a / bundle.name / "manifest.json").read_text())
        assert manifest["format"] == "kernelopt-candidates" and manifest["kernels"]
        written = 0
        for k in manifest["kernels"]:
            for c in k["candidates"]:
                source = (a / bundle.name / c["file"]).read_text()
                ast.parse(source)
                assert "@triton.jit" in source and f"def {k['kernel']}(" in source, c["file"]
                assert c["id"] == f"c{c['index']}" and c["origin"].replace(":", "_") in c["file"]
                written += 1
        assert written >= 1, bundle.name
    assert "SHA256SUMS" in {p.name for p in a.iterdir()}


def test_compare_names_the_kernel_whose_candidate_changed(dumps, kernelopt_bin, tmp_path):
    import shutil

    a, b = dumps
    changed = tmp_path / "changed"
    shutil.copytree(b, changed)
    manifest = json.loads((changed / "layer_norm" / "manifest.json").read_text())
    kernel = next(k for k in manifest["kernels"] if k["candidates"])
    path = changed / "layer_norm" / kernel["candidates"][0]["file"]
    data = bytearray(path.read_bytes())
    data[-2] ^= 1  # one byte
    path.write_bytes(bytes(data))
    r = tool("--compare", a, changed, binary=kernelopt_bin)
    assert r.returncode == 1, r.stdout
    assert f"layer_norm/{kernel['dir']}: bytes differ: {kernel['candidates'][0]['file']}" in r.stdout
    assert "softmax_lastdim" not in r.stdout and "max_pool2d" not in r.stdout


def test_candidates_refuses_bad_input_in_one_line(kernelopt_bin, tmp_path):
    def run(*args):
        return subprocess.run([kernelopt_bin, "candidates", *map(str, args), "--device", "cpu"], capture_output=True,
                              text=True, timeout=60)

    missing = run(tmp_path / "nope", "--out", tmp_path / "out")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    unwritable = run(BUNDLES[0], "--out", blocker / "out")
    full = tmp_path / "full"
    full.mkdir()
    (full / "old").write_text("x")
    not_empty = run(BUNDLES[0], "--out", full)
    for r, says in ((missing, "not a bundle directory"), (unwritable, "cannot create or write"),
                    (not_empty, "not empty")):
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("kernelopt: error: ")


def test_the_dump_is_what_the_search_proposes(dumps, kernelopt_bin, tmp_path):
    """`kernelopt optimize` on the same bundle lists the same candidates first in its report (the search's own
    records, verified or not), in the same order, with the same hashes; after them come only the reviewer's
    repairs and the tuner's neighbours, which the dump leaves out (they answer a cascade's outcome)."""
    a, _ = dumps
    out = tmp_path / "out"
    r = subprocess.run([kernelopt_bin, "optimize", str(BUNDLES[1]), "--device", "cpu", "--out", str(out), "--db",
                        str(tmp_path / "results.db"), "--agents", "builtin", "--quiet"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    manifest = json.loads((a / BUNDLES[1].name / "manifest.json").read_text())
    fields = ("id", "origin", "description", "hash", "config")
    searched = {k["name"]: k["candidates"] for k in report["kernels"]}
    dumped = {k["kernel"]: k["candidates"] for k in manifest["kernels"]}
    assert searched.keys() == dumped.keys()
    for name, cands in dumped.items():
        assert cands, name
        ours = searched[name][:len(cands)]
        assert [{f: c[f] for f in fields} for c in ours] == [{f: c[f] for f in fields} for c in cands]
        assert all(c["parent"] for c in searched[name][len(cands):])


def test_regions_alone_dump_whole_modules_without_a_worker(kernelopt_bin, tmp_path):
    """`kernelopt candidates --regions`: each region candidate as the whole module it stitches, planned from the
    bundle alone (no worker starts: the interpreter is not on PATH for it), in seconds."""
    bundle = ROOT / "tests" / "python" / "data" / "softmax_rows_50k_small"
    out = tmp_path / "regions"
    env = {"PATH": "/usr/bin:/bin", "KERNELOPT_PYTHON": "/nonexistent/python3"}
    r = subprocess.run([kernelopt_bin, "candidates", str(bundle), "--regions", "-o", str(out), "-q"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kernels"] == []
    cands = [c for reg in manifest["regions"] for c in reg["candidates"]]
    assert cands and all(c["origin"] == "split:segments" for c in cands), manifest
    baseline = (bundle / "module_0.py").read_text()
    for c in cands:
        module = (out / c["file"]).read_text()
        ast.parse(module)
        # The whole module: the original's host code with the split's launches in place of the kernel's.
        assert "def call(" in module and f"{c['kernel']}.run(" in module and module != baseline
    # A second dump into the same directory is refused with one line naming the fix.
    again = subprocess.run([kernelopt_bin, "candidates", str(bundle), "--regions", "-o", str(out)],
                           capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode != 0 and "give a new directory to --out" in again.stderr


def test_every_generated_candidate_compiles_for_hopper_without_a_gpu(dumps):
    """The interpreter runs a kernel's Python without the compiler's type checks (docs/testing.md): every template,
    pattern and rewrite candidate of the three bundles must also compile for sm_90 (tools/compile_hopper.py)."""
    a, _ = dumps
    files = []
    for bundle in BUNDLES:
        manifest = json.loads((a / bundle.name / "manifest.json").read_text())
        files += [a / bundle.name / c["file"] for k in manifest["kernels"] for c in k["candidates"]
                  if c["origin"] != "config"]  # the compiler's own kernel at other launch configs
    assert len(files) >= 40
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "compile_hopper.py"), *map(str, files)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    compiled = r.stdout.count("compiled for sm_90")
    skipped = r.stdout.count("skipped (autotuned")
    assert compiled + skipped == len(files) and compiled >= len(files) - 2, r.stdout[-3000:]
