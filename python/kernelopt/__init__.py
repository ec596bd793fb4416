"""kernelopt: optimize the Triton kernels that torch.compile (Inductor) generates.

Kept import-light on purpose: importing the package must not pull in torch, so
tools that only read bundles start fast and work without torch installed.
"""

__version__ = "0.1.0"
