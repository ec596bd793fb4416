"""The worker: `python -m kernelopt.worker`, one process per GPU (or CPU).

Speaks JSON lines on stdin/stdout (docs/protocol.md): one request in, one reply
out. It executes; the engine decides. Anything else that writes to stdout
(kernels, torch, print) would corrupt the protocol, so stdout is moved to a
private descriptor first and fd 1 is pointed at stderr.
"""

import os
import sys


def _private_stdout():
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "w", buffering=1)


def _host_memory_settings() -> None:
    """Before torch loads (both are read once): host copies of GB-sized tensors (the memory plan's
    spills, docs/memory.md) go three to four times faster with transparent huge pages for torch's CPU
    allocations and pinned blocks registered by several threads (tools/host_copy_bench.py on the
    H200: 3.2 GB to fresh pageable memory 3.1-3.8 s -> 1.1 s; to fresh pinned memory 2.9 s -> 0.8 s).
    A user's own setting wins."""
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    if "pinned_" not in conf:
        extra = "pinned_use_cuda_host_register:True,pinned_num_register_threads:8"
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = f"{conf},{extra}" if conf else extra


def _stack_dumps() -> None:
    """KERNELOPT_WORKER_STACKS=DIR: every 30 s, every thread's stack goes to DIR/worker-PID.stacks
    (where a slow or stuck request spends its time; the worker's stderr is only kept in part)."""
    where = os.environ.get("KERNELOPT_WORKER_STACKS")
    if where:
        import faulthandler

        os.makedirs(where, exist_ok=True)
        stream = open(os.path.join(where, f"worker-{os.getpid()}.stacks"), "w")  # noqa: SIM115 - lives as long as the process
        faulthandler.dump_traceback_later(30, repeat=True, file=stream)


def main() -> int:
    out = _private_stdout()
    if os.environ.get("KERNELOPT_DEVICE") == "cpu":
        # CPU mode: Triton kernels run in Triton's interpreter, chosen at import time.
        os.environ["TRITON_INTERPRET"] = "1"
    _host_memory_settings()
    _stack_dumps()
    from kernelopt.worker.ops import (bench_ops, bundle_ops, capture_ops, gpu_ops, process_ops,  # noqa: F401
                                      region_ops, search_ops)  # (their @op handlers register)
    from kernelopt.worker.protocol import serve

    return serve(sys.stdin, out)


if __name__ == "__main__":
    sys.exit(main())
