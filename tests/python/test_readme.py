"""README.md and docs/tutorial.md as a newcomer follows them (issue 28, item 4): the blocks marked
`<!-- readme-test: cpu -->` run exactly as written, in order, from the repository's root, with the engine under
test as `kernelopt` on PATH; every kernel a command names exists in its bundle; the docs cite only files that
are in the repository; the README's corpus count is the corpus's.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- readme-test: cpu -->"


def marked_blocks(doc: Path) -> list[tuple[str, str]]:
    """(language, text) of every fenced block right after the marker."""
    blocks = re.findall(re.escape(MARK) + r"\s*\n```(\w+)\n(.*?)\n```", doc.read_text(), re.S)
    assert blocks, f"{doc.name}: no block marked {MARK}"
    return blocks


def commands(text: str) -> list[str]:
    """The block's shell commands: comments dropped, backslash continuations joined."""
    out, cur = [], ""
    for line in text.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append(" ".join(cur.split()))
            cur = ""
    return out


def named_kernels(cmd: str) -> list[tuple[str, str]]:
    """(bundle or module, kernel) for every kernel a command names by --kernel, --source or --replace."""
    words = cmd.split()
    target = next((w for w in words[2:] if not w.startswith("-")), "")
    bundle = str(Path(target).parent) if target.endswith(".py") else target
    names = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--kernel", "--source")]
    names += [words[i + 1].split("=")[0] for i, w in enumerate(words[:-1]) if w == "--replace"]
    return [(bundle, n) for n in names]


@pytest.fixture(scope="module")
def shell_env(kernelopt_bin, tmp_path_factory):
    """PATH with the engine under test as `kernelopt`, this checkout's Python package first."""
    bin_dir = tmp_path_factory.mktemp("bin")
    (bin_dir / "kernelopt").symlink_to(Path(kernelopt_bin).resolve())
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = f"{ROOT / 'python'}{os.pathsep}{env.get('PYTHONPATH', '')}"
    env["KERNELOPT_DB"] = str(tmp_path_factory.mktemp("db") / "results.db")
    env.pop("TRITON_INTERPRET", None)  # as on a fresh shell: the docs must say where it is needed
    return env


def kernels_of(bundle: str, env) -> set[str]:
    r = subprocess.run(["kernelopt", "inspect", bundle, "--json"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    return {k["name"] for k in data["kernels"]}


@pytest.mark.parametrize("doc", ["README.md", "docs/tutorial.md"])
def test_the_marked_cpu_commands_run_as_written(doc, shell_env):
    for lang, text in marked_blocks(ROOT / doc):
        if lang == "python":
            r = subprocess.run(["python3", "-c", text], cwd=ROOT, env=shell_env, capture_output=True, text=True,
                               timeout=600)
            assert r.returncode == 0, f"{doc}: the Python block failed:\n{text}\n{r.stderr[-3000:]}"
            continue
        assert lang == "sh", lang
        for cmd in commands(text):
            for bundle, kernel in named_kernels(cmd):
                assert kernel in kernels_of(bundle, shell_env), f"{doc}: `{cmd}` names no kernel of {bundle}"
            r = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=shell_env, capture_output=True, text=True,
                               timeout=600)
            assert r.returncode == 0, f"{doc}: `{cmd}` exited {r.returncode}:\n{r.stderr[-3000:]}"


def test_the_commands_parser_joins_continuations_and_finds_named_kernels():
    cmds = commands("# a comment\nkernelopt verify b --kernel k1 \\\n    --candidate c.py\n\nkernelopt stitch b/m.py "
                    "--replace k2=x.py -o o.py\n")
    assert cmds == ["kernelopt verify b --kernel k1 --candidate c.py", "kernelopt stitch b/m.py --replace k2=x.py -o o.py"]
    assert named_kernels(cmds[0]) == [("b", "k1")] and named_kernels(cmds[1]) == [("b", "k2")]


def test_every_kernel_named_in_the_docs_examples_exists(shell_env):
    """Also the GPU examples, which CI cannot run: a command naming a corpus kernel must name a real one."""
    for doc in ["README.md", "docs/tutorial.md"]:
        for block in re.findall(r"```sh\n(.*?)\n```", (ROOT / doc).read_text(), re.S):
            for cmd in commands(block):
                for bundle, kernel in named_kernels(cmd):
                    if bundle.startswith("corpus/"):
                        assert kernel in kernels_of(bundle, shell_env), f"{doc}: `{cmd}`"


def test_the_docs_cite_only_files_in_the_repository():
    docs = [ROOT / "README.md", ROOT / "engine/src/README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for doc in docs:
        text = doc.read_text()
        assert "DESIGN.md" not in text, doc
        for link in re.findall(r"\]\(([\w./-]+\.\w+)(?:#[^)]*)?\)", text):  # relative Markdown links
            assert (doc.parent / link).exists(), f"{doc.relative_to(ROOT)}: {link}"
        for path in re.findall(r"(?<![\w/.])((?:docs|examples|benchmarks|tools|tests)/[\w./-]+\.(?:md|py|sh|json))", text):
            assert (ROOT / path).exists() or "<" in path, f"{doc.relative_to(ROOT)}: {path}"


def test_the_readmes_corpus_count_is_the_corpus():
    m = re.search(r"a corpus of (\d+) model bundles and (\d+) Triton / Helion kernel-file bundles",
                  " ".join((ROOT / "README.md").read_text().split()))
    assert m, "README: the corpus count sentence"
    corpus = ROOT / "corpus"
    models = [d for d in corpus.iterdir() if (d / "meta.json").is_file()]
    files = [d for sub in ("triton", "helion") for d in (corpus / sub).iterdir() if (d / "meta.json").is_file()]
    assert (int(m[1]), int(m[2])) == (len(models), len(files))
    assert f"the {len(models)} in `corpus/`" in " ".join((ROOT / "README.md").read_text().split())
