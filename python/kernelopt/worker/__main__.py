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


def main() -> int:
    out = _private_stdout()
    if os.environ.get("KERNELOPT_DEVICE") == "cpu":
        # CPU mode: Triton kernels run in Triton's interpreter, chosen at import time.
        os.environ["TRITON_INTERPRET"] = "1"
    from kernelopt.worker.protocol import serve

    return serve(sys.stdin, out)


if __name__ == "__main__":
    sys.exit(main())
