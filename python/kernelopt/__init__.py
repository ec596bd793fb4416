"""kernelopt: optimize the Triton kernels that torch.compile (Inductor) generates.

Kept import-light on purpose: importing the package must not pull in torch, so
tools that only read bundles start fast and work without torch installed. The
Python API (docs/python_api.md) is reached lazily:

    kernelopt.load(DIR, model)                         # run an optimized result
    torch.compile(model, backend=kernelopt.backend(DIR))  # apply it inside torch.compile
    kernelopt.load_launcher(DIR)                        # a Triton/Helion kernel file's optimized launcher
"""

__version__ = "0.1.0"

# name -> module (inside this package) that defines it; imported on first access.
_LAZY = {
    "load": "api",
    "backend": "api",
    "ResultError": "api",
    "match_module": "api",
    "load_launcher": "api_kernels",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelopt' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
