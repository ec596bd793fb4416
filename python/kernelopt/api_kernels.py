"""Use an optimized kernel-file result from Python (docs/inputs.md, docs/python_api.md).

    run = kernelopt.load_launcher("out/softmax")   # the launcher's signature, optimized module inside
    y = run(x)                                      # same as the file's launch(x), with the result's kernels

A Triton or Helion kernel file has no model: the result's module takes the launcher's inputs
directly (meta.json's graph 0 lists them in order), so loading is reading the module and
checking each input against what capture recorded.
"""

from __future__ import annotations

from pathlib import Path

import torch

from .api import ResultError, _describe, _recorded, _resolve_device, open_result
from .worker.runtime.cpu_runtime import load_module

__all__ = ["load_launcher", "LoadedLauncher"]


def load_launcher(path: str | Path, device: str | None = None) -> "LoadedLauncher":
    """A callable taking the launcher's inputs and returning its outputs (a tensor, or a tuple when
    the launcher returned several), computed by the result's optimized module.

    device: as kernelopt.load ("cuda", or "cpu" for Triton's interpreter); inputs must match the
    recorded shapes, strides and dtypes (ResultError otherwise).
    """
    result = open_result(path)
    if result.meta.get("input_kind", "module") == "module":
        raise ResultError(f"{result.path} was captured from an nn.Module problem; use kernelopt.load(path, model)")
    dev = _resolve_device(result.meta, device)
    return LoadedLauncher(result, dev)


class LoadedLauncher:
    def __init__(self, result, device: str):
        self.result, self.device = result, device
        self.module = load_module(result.sources[0], str(result.module_path(0)), device)
        self.args = result.meta["graphs"][0]["args"]

    def __repr__(self) -> str:
        return f"<kernelopt launcher {self.result.meta.get('launcher')} from {self.result.path} on {self.device}>"

    def __call__(self, *inputs):
        if len(inputs) != len(self.args):
            raise ResultError(f"{len(inputs)} inputs given, the result recorded {len(self.args)}; pass the "
                              "launcher's inputs in order")
        for x, rec in zip(inputs, self.args):
            if rec["kind"] == "scalar":
                if x != rec["value"]:
                    raise ResultError(f"input {rec['index']} is {x!r}, recorded {rec['value']!r}; the module "
                                      "has it built in: re-capture with this value")
                continue
            if not isinstance(x, torch.Tensor) or [list(x.shape), list(x.stride()), str(x.dtype)[6:]] != \
                    [rec["shape"], rec["stride"], rec["dtype"]] or x.device.type != self.device:
                raise ResultError(f"input {rec['index']} is {_describe(x)}, recorded {_recorded(rec)} (strides "
                                  f"{rec['stride']}) on {self.device}; re-run `kernelopt capture` and "
                                  "`kernelopt optimize` with inputs like these")
        with torch.no_grad():
            out = self.module.call(list(inputs))
        return out[0] if len(out) == 1 else out
