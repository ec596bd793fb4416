"""Kernel files (docs/inputs.md): what kind of input a problem file is, and loading the two
kinds that are not an nn.Module — a standalone Triton file and a Helion file.

Both kinds define `get_inputs()` and a launcher (`launch(*inputs)`, or the file's only
public function); a Helion file's launcher may be the `@helion.kernel` function itself.
An optional `reference(*inputs)` is the float64 reference G3 falls back to.

`LauncherModel` gives such a file the shape the rest of the worker expects of a problem
(a module whose forward is the computation): forward runs the original launcher, so
"the eager model" of a kernel file is its original kernels.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import torch

from .capture_common import CaptureError, import_file, one_line

KINDS = ("module", "triton", "helion")
_NOT_LAUNCHERS = {"get_inputs", "get_init_inputs", "reference"}


def input_kind(path: str | Path) -> str:
    """"module" (class Model), "helion" (imports helion) or "triton", read from the file's syntax,
    so a Helion file is recognised even where helion cannot be imported."""
    path = Path(path)
    if not path.is_file():
        raise CaptureError(f"problem file {path} not found", "pass the path of an existing .py problem file")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except SyntaxError as e:
        raise CaptureError(f"{path}:{e.lineno}: syntax error: {e.msg}", "fix the file's syntax") from e
    for n in tree.body:  # Model defined, imported or assigned at top level
        if (isinstance(n, ast.ClassDef) and n.name == "Model") or \
                (isinstance(n, ast.ImportFrom) and any((a.asname or a.name) == "Model" for a in n.names)) or \
                (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "Model" for t in n.targets)):
            return "module"
    imported = set()
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        imported.update(n.split(".")[0] for n in names)
    if "helion" in imported:
        return "helion"
    # Neither a Model nor a kernel library: report it as an nn.Module problem missing its parts.
    return "triton" if "triton" in imported else "module"


def check_helion_installed(path: Path) -> None:
    try:
        found = importlib.util.find_spec("helion") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise CaptureError(f"{path} is a Helion kernel file but helion is not installed",
                           "pip install helion==1.5.0 (docs/inputs.md lists the wheels for a machine without network)")


def kernel_objects(module) -> dict[str, Any]:
    """The file's Triton kernels by global name: @triton.jit functions, with @triton.autotune /
    @triton.heuristics around them (helpers called from kernels are among them too)."""
    from triton.runtime.jit import KernelInterface

    return {k: v for k, v in vars(module).items() if isinstance(v, KernelInterface)}


def helion_kernels(module) -> dict[str, Any]:
    try:
        from helion.runtime.kernel import Kernel
    except ImportError:
        return {}
    return {k: v for k, v in vars(module).items() if isinstance(v, Kernel)}


def innermost_jit(kernel):
    """The @triton.jit function under any @triton.autotune / @triton.heuristics wrappers."""
    from triton.runtime.jit import KernelInterface

    while isinstance(getattr(kernel, "fn", None), KernelInterface):
        kernel = kernel.fn
    return kernel


def find_launcher(module, path: Path, kind: str):
    """(name, function): `launch`, else the file's only public function that is neither a kernel
    nor get_inputs/reference; for Helion files a single @helion.kernel also serves."""
    if callable(getattr(module, "launch", None)):
        return "launch", module.launch
    kernels = set(kernel_objects(module)) | set(helion_kernels(module))
    functions = [k for k, v in vars(module).items()
                 if callable(v) and getattr(v, "__module__", None) == module.__name__ and not isinstance(v, type)
                 and not k.startswith("_") and k not in _NOT_LAUNCHERS and k not in kernels]
    if len(functions) == 1:
        return functions[0], getattr(module, functions[0])
    if kind == "helion" and not functions and len(helion_kernels(module)) == 1:
        name, kernel = next(iter(helion_kernels(module).items()))
        return name, kernel
    if not functions:
        what = ", ".join(sorted(kernels)) or "no kernel"
        raise CaptureError(f"{path} defines {what} but no launcher",
                           "define `def launch(*inputs)` that allocates the outputs, launches the kernel(s) "
                           "and returns the outputs")
    raise CaptureError(f"{path} has several candidate launchers ({', '.join(functions)})",
                       "name the launcher `launch` (or prefix helpers with _)")


def import_kernel_file(path: str | Path, kind: str):
    """Import a Triton or Helion file and check its convention; returns (module, launcher name)."""
    path = Path(path)
    if kind == "helion":
        check_helion_installed(path)
    module = import_file(path)
    if not callable(getattr(module, "get_inputs", None)):
        raise CaptureError(f"{path} lacks get_inputs()", "define get_inputs() returning the launcher's inputs")
    if kind == "triton" and not kernel_objects(module):
        raise CaptureError(f"{path} defines no Triton kernel",
                           "decorate the kernel with @triton.jit (docs/inputs.md), or define class Model for a "
                           "PyTorch problem")
    if kind == "helion" and not helion_kernels(module):
        raise CaptureError(f"{path} imports helion but defines no @helion.kernel", "decorate the kernel with @helion.kernel")
    name, _ = find_launcher(module, path, kind)
    return module, name


class LauncherModel(torch.nn.Module):
    """A kernel file as a problem: forward(*inputs) runs the file's original launcher."""

    def __init__(self, module, launcher: str):
        super().__init__()
        self.file, self.launcher = module, launcher

    def forward(self, *inputs):
        return getattr(self.file, self.launcher)(*inputs)

    def float64_forward(self, *inputs):
        """The file's `reference(*inputs)` on float64 inputs; without one, None."""
        reference = getattr(self.file, "reference", None)
        return None if reference is None else reference(*inputs)


def run_launcher(fn, inputs: list, path: Path, name: str):
    """Run the launcher, turning its missing globals into a one-line error that names the fix."""
    try:
        return fn(*inputs)
    except NameError as e:
        missing = getattr(e, "name", None) or str(e)
        raise CaptureError(f"launcher `{name}` in {path} reads global {missing!r}, which the file does not define",
                           "define it in the file (a kernel file must run on its own)") from e
    except CaptureError:
        raise  # already one line that names the fix
    except Exception as e:
        raise CaptureError(f"launcher `{name}` in {path} failed: {one_line(e)}",
                           "run the launcher on get_inputs() yourself and fix it; rerun with KERNELOPT_DEBUG=1 "
                           "for the traceback") from e
