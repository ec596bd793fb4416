"""Inductor's Triton backend on a machine without a GPU (`capture --device cpu --cpu-kernels triton`).

Inductor can write Triton kernels for CPU tensors (config `cpu_backend="triton"`): the same lowering
and kernel code generator as for a GPU (index expressions, masks, loops, persistent or looped
reductions), launched from a wrapper that allocates CPU tensors. Two things stand between that and a
machine without a GPU driver: the kernel header's backend hash asks Triton's active driver, and the
generated module compiles each kernel with Triton. Here the hash is a constant and every kernel is
handed to the worker's CPU runtime, which runs it under Triton's interpreter, as CPU mode runs
bundles captured on a GPU (docs/cpu_mode.md). The bundle written is then one `kernelopt optimize
--device cpu` optimizes: real Inductor kernels for shapes chosen freely on any machine.

Launch heuristics that read the device (an SM count, a warp size) see a CPU; the kernels' code is
what a GPU capture would hold for most ops, but a GPU capture stays the reference for performance.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from .capture_common import CaptureError


@contextlib.contextmanager
def interpreted_triton() -> Iterator[None]:
    """While active, Inductor's generated modules run their Triton kernels in the interpreter."""
    import torch.utils._triton as torch_triton
    from torch._inductor import async_compile

    from ..runtime import cpu_runtime

    try:
        cpu_runtime.check_interpreter()
    except RuntimeError as e:
        raise CaptureError(str(e), "set TRITON_INTERPRET=1 (kernelopt capture does so itself)") from e

    def triton(self, kernel_name: str, source_code: str, device_str: str = "cpu", *args, **kwargs):
        return cpu_runtime.load_kernel(kernel_name, source_code, "cpu")

    saved = (torch_triton.triton_hash_with_backend, async_compile.AsyncCompile.triton)
    torch_triton.triton_hash_with_backend = lambda: "kernelopt-cpu-interpreter"
    async_compile.AsyncCompile.triton = triton
    try:
        yield
    finally:
        torch_triton.triton_hash_with_backend, async_compile.AsyncCompile.triton = saved
