"""The worker: the process the engine starts (`python -m kernelopt.worker`, docs/protocol.md) and
capture (`python -m kernelopt.worker.capture`, docs/bundle.md).

Subpackages by concern, each a layer of docs/layers.md (lowest first; a layer imports only its own
and lower ones):
- measure/: timing, GPU ceilings, the memory plan, output comparison, poison fills, launch records,
  the float64 mode;
- runtime/: loading generated modules and kernels (Inductor's runtime on a GPU, the CPU-mode shims
  over Triton's interpreter), the launcher for pinned configs, G1's compile check;
- capture/: a problem or kernel file into a bundle;
- this package's own modules: protocol.py (request dispatch), bundle_runner.py (running a bundle)
  and bundle_state.py (the bundles, compiled candidates and stitched modules a worker keeps);
- ops/: the request handlers, registered with protocol.op;
- __main__.py: the process, which imports ops/ so the handlers register.
"""
