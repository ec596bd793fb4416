"""How long moving a several-GB tensor between the device and the host takes, by route: what the
memory plan (docs/memory.md) pays each time it keeps a reference or a launch's output on the host.

    python3 tools/host_copy_bench.py [GB]
"""
import sys
import time

import torch


def timed(label, fn, reps=2):
    for i in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        print(f"{label} (run {i + 1}): {time.perf_counter() - t:.3f} s", flush=True)
        del out


def main():
    gb = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
    x = torch.randn(int(gb * (1 << 30)) // 4, device="cuda")
    print(f"{x.numel() * 4 / 1e9:.2f} GB float32")
    timed("device clone", lambda: x.clone())
    timed("to('cpu') pageable", lambda: x.to("cpu"))
    timed("pinned alloc + copy", lambda: torch.empty(x.shape, pin_memory=True).copy_(x))
    host = torch.empty(x.shape, pin_memory=True)
    timed("copy into a kept pinned buffer", lambda: host.copy_(x))
    page = torch.empty(x.shape)
    page.fill_(1.0)
    timed("copy into a touched pageable buffer", lambda: page.copy_(x))
    timed("host to device from pinned", lambda: host.to("cuda"))
    timed("host to device from pageable", lambda: page.to("cuda"))


if __name__ == "__main__":
    main()
