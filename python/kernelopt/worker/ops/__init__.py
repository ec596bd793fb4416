"""The worker's request handlers (docs/protocol.md), each registered with protocol.op when its module is
imported (__main__ imports them all): process_ops.py (hello, ceilings, echo, memory), bundle_ops.py
(loading and running bundles, G1-G3), gpu_ops.py (timing and profiles), search_ops.py (screening) and
bench_ops.py (the suite runner)."""
