"""`pip install .` (issue 28, item 6): the wheel scikit-build-core builds holds the Python package and the
`kernelopt` binary as its script; installed with --no-deps into a clean virtual environment (no system site
packages, so no torch) the command is on the environment's PATH, runs, needs nothing outside glibc's libraries,
and the package imports. `pip install -e .` (setup.sh) builds nothing: it installs the Python package alone.

The wheel build compiles the engine once (the KOPT_WHEEL build: the `kernelopt` target alone) in build/wheel,
which later runs reuse (so does ccache, when installed); the module builds it once for all its tests, under a
lock so that two runs at once do not share the build directory.
"""

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "kernelopt"

pytestmark = pytest.mark.wheel

# What a binary that needs only glibc may load (ldd's names; the loader and vDSO by their usual names).
GLIBC_LIBS = {"linux-vdso.so.1", "linux-gate.so.1", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0",
              "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}


def project_version() -> str:
    m = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert m, "pyproject.toml: project.version"
    return m[1]


def clean_env(**extra) -> dict:
    """The environment without what would let the checkout's package or another engine stand in."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "KERNELOPT_BIN", "KERNELOPT_PYTHON")}
    env.update(extra)
    return env


def run(cmd, timeout=300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    try:
        import scikit_build_core  # noqa: F401
    except ImportError:
        pytest.fail("scikit-build-core is not installed: `pip install -r requirements-ci.txt` (setup.sh does)")
    out = tmp_path_factory.mktemp("wheel")
    (ROOT / "build").mkdir(exist_ok=True)
    with open(ROOT / "build" / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # build/wheel is shared with any other run of this test or `pip install .`
        start = time.monotonic()
        r = run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation", "-w", out],
                timeout=3600, cwd=ROOT, env=clean_env())
    assert r.returncode == 0, f"pip wheel failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    print(f"\nwheel built in {time.monotonic() - start:.0f}s")
    wheels = list(out.glob("kernelopt-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment (no system site packages) with the wheel installed, without dependencies."""
    env_dir = tmp_path_factory.mktemp("venv")
    r = run([sys.executable, "-m", "venv", env_dir], env=clean_env())
    assert r.returncode == 0, r.stderr
    r = run([env_dir / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel],
            env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    return env_dir


def test_the_wheel_holds_the_package_and_the_binary_and_nothing_else(wheel):
    version = project_version()
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        script = f"kernelopt-{version}.data/scripts/kernelopt"
        assert script in names
        assert z.getinfo(script).external_attr >> 16 & 0o111, "the binary is not executable in the wheel"
        sources = {"kernelopt/" + p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                   if "__pycache__" not in p.parts}
        assert sources <= names, f"missing from the wheel: {sorted(sources - names)}"
        dist_info = f"kernelopt-{version}.dist-info/"
        extra = sorted(n for n in names - sources - {script} if not n.startswith(dist_info))
        assert not extra, f"unexpected files in the wheel: {extra}"
        entry_points = z.read(dist_info + "entry_points.txt").decode()
        metadata = z.read(dist_info + "METADATA").decode()
    assert re.search(r"\[torch_dynamo_backends\]\s*\nkernelopt = kernelopt\.api_backend:named_backend", entry_points)
    assert "Requires-Dist" not in metadata, "the dependency list must stay empty (torch/triton: the environment's)"
    assert f"-{version}-py3-none-" in wheel.name  # the binary does not depend on the Python ABI


def test_the_installed_command_runs_and_prints_its_version(venv):
    kopt = shutil.which("kernelopt", path=str(venv / "bin"))
    assert kopt == str(venv / "bin" / "kernelopt"), "the wheel put no `kernelopt` on the environment's PATH"
    r = run([kopt, "--version"], env=clean_env(PATH=f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"kernelopt {project_version()}"


def test_the_installed_binary_needs_only_glibc(venv):
    if not shutil.which("ldd"):
        pytest.skip("no ldd on this machine")
    r = run(["ldd", venv / "bin" / "kernelopt"])
    assert r.returncode == 0, r.stdout + r.stderr
    libs = [Path(line.split()[0]).name for line in r.stdout.splitlines() if line.strip()]
    assert "libc.so.6" in libs, r.stdout
    extra = [lib for lib in libs if lib not in GLIBC_LIBS]
    assert not extra, f"the binary needs libraries outside glibc: {extra}\n{r.stdout}"
    assert "not found" not in r.stdout, r.stdout


def test_a_user_error_is_one_line(venv):
    r = run([venv / "bin" / "kernelopt", "optimize", "/nonexistent"], env=clean_env())
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelopt: error: /nonexistent"), r.stderr


def test_the_package_imports_from_the_environment_without_torch(venv, tmp_path):
    code = ("import importlib.util, kernelopt, kernelopt.worker.protocol\n"
            "from importlib.metadata import entry_points\n"
            "print(kernelopt.__file__)\n"
            "print(kernelopt.__version__)\n"
            "print(importlib.util.find_spec('torch') is None)\n"
            "print([e.value for e in entry_points(group='torch_dynamo_backends') if e.name == 'kernelopt'])\n")
    r = run([venv / "bin" / "python", "-c", code], cwd=tmp_path, env=clean_env())
    assert r.returncode == 0, r.stderr
    file, version, no_torch, backends = r.stdout.splitlines()
    assert Path(file).is_relative_to(venv), f"kernelopt imported from {file}, not from the environment"
    assert version == project_version()
    assert no_torch == "True", "the environment is not clean: torch is importable"
    assert backends == "['kernelopt.api_backend:named_backend']"


def test_the_editable_install_builds_no_engine(tmp_path):
    """setup.sh's `pip install -e .`: the Python package from python/ (a .pth), no CMake build, no binary."""
    code = "import sys; from scikit_build_core.build import build_editable; print(build_editable(sys.argv[1]))"
    start = time.monotonic()
    r = run([sys.executable, "-c", code, tmp_path], cwd=ROOT, env=clean_env(), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert time.monotonic() - start < 60
    assert "Configuring CMake" not in r.stdout + r.stderr
    with zipfile.ZipFile(tmp_path / r.stdout.strip().splitlines()[-1]) as z:
        names = z.namelist()
        pth = [z.read(n).decode() for n in names if n.endswith(".pth")]
    assert not [n for n in names if ".data/" in n], names
    assert any(str(ROOT / "python") in p.splitlines() for p in pth), pth


def test_the_installed_command_runs_its_worker_with_the_environments_python(venv, tmp_path):
    """Not activated (python3 on PATH is another Python, with torch), the environment's kernelopt still starts
    its worker with the environment's own python3 — which has no torch here, so the start fails and the one-line
    error names that Python and the exception, not a line from inside the traceback."""
    r = run([venv / "bin" / "kernelopt", "optimize", ROOT / "corpus" / "softmax_lastdim", "--device", "cpu",
             "--out", tmp_path / "o"], env=clean_env(), timeout=300)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [line for line in r.stderr.strip().splitlines() if line.startswith("kernelopt: error:")]
    assert len(lines) == 1, r.stderr
    assert f"`{venv}/bin/python3 -m kernelopt.worker`" in lines[0], lines[0]
    assert "No module named 'torch'" in lines[0], lines[0]
