"""G1's last check, `compiles` (docs/gates.md): the candidate is built and compiled
for the recorded launch, without running its work.

- CUDA, Inductor's own kernel object (no pinned config): AsyncCompile has already
  compiled every config while loading the source; if it has not (a lazy kernel),
  precompile() forces it.
- CUDA, a pinned config (kernelopt's Launcher over the raw @triton.jit function):
  JITFunction.run(..., warmup=True) compiles for the recorded arguments' types and
  specialization with the launch's grid and constexprs, and launches nothing.
- CPU: Triton's interpreter has no compiler; it raises the frontend's errors
  (non-power-of-2 arange, unknown tl function, shape mismatch, ...) when it executes
  the statement. So the first program of the recorded launch (grid (1, 1, 1)) is
  traced on copies of the recorded arguments. One program, not the grid: cheap, and
  faults of the kernel's work (hangs, bad addresses) beyond it stay G2's to judge.
  Code paths that program does not take are not checked here (G2 runs them all).
"""

from __future__ import annotations

import copy

from ..measure.launches import LaunchRecord


class _FirstProgram:
    """Stands in for an InterpretedFunction: `fn[grid]` runs program (0, 0, 0) only."""

    def __init__(self, fn):
        self._fn = fn

    def __getitem__(self, grid):
        return self._fn[(1, 1, 1)]

    def __getattr__(self, name):
        return getattr(self._fn, name)


class _CompileOnly:
    """Stands in for a JITFunction: `fn[grid](*args)` compiles for those arguments, launches nothing."""

    def __init__(self, fn):
        self._fn = fn

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self._fn.run(*args, grid=grid, warmup=True, **kwargs)

    def __getattr__(self, name):
        return getattr(self._fn, name)


def compile_for_launch(launcher, rec: LaunchRecord, device: str) -> str:
    """Forces the compile of `launcher` for launch `rec`; raises the compiler's error.
    Returns how it was forced (for the record)."""
    from .launcher import Launcher

    if isinstance(launcher, Launcher):
        probe = copy.copy(launcher)  # shallow: the pinned config and metadata are shared, fn is not
        probe.fn = _FirstProgram(launcher.fn) if device == "cpu" else _CompileOnly(launcher.fn)
        probe.run(*rec.fresh_args(), **rec.kwargs)
        return "interpreter: first program traced" if device == "cpu" else "triton: compiled for the launch"
    # Inductor's CachingAutotuner (CUDA, no pinned config).
    if getattr(launcher, "compile_results", None) or getattr(launcher, "launchers", None):
        return "inductor: every config compiled at load"
    launcher.precompile()
    return "inductor: precompiled"
