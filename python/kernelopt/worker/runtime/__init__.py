"""Loading and running generated modules and kernels (docs/cpu_mode.md): cpu_runtime.py loads a module
on Inductor's runtime (GPU) or through CPU shims over Triton's interpreter (libdevice_cpu.py,
reductions_cpu.py, scans_cpu.py, interp_tensors.py); launcher.py launches a kernel with one pinned
config; compile_check.py forces a candidate's compile for a recorded launch (G1's `compiles`)."""
