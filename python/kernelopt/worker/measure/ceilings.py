"""Measured ceilings of the GPU this worker runs on: device copy bandwidth and
matmul rates. The roofline floor of a kernel is max(bytes / copy bandwidth,
FLOPs / matmul or vector rate), so these are measured, never taken from a
datasheet. The engine caches them per GPU model and software versions.
"""

from __future__ import annotations


def _median_ms(fn, reps: int) -> float:
    import torch

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return times[len(times) // 2]


def measure() -> dict:
    import torch

    # Copy: 2 GiB read + 2 GiB written, far beyond L2 (60 MB on an H200).
    n = 1 << 29
    src = torch.randn(n, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    ms = _median_ms(lambda: dst.copy_(src), 20)
    copy_bps = 2 * src.numel() * 4 / (ms * 1e-3)
    del src, dst

    rates = {}
    # tf32: the rate of fp32 matrix products a Triton tl.dot runs on tensor cores (its default precision);
    # fp32 is true fp32, Inductor's default for torch.mm.
    for name, dtype, size, tf32 in (("bf16", torch.bfloat16, 8192, False), ("fp16", torch.float16, 8192, False),
                                    ("tf32", torch.float32, 8192, True), ("fp32", torch.float32, 8192, False)):
        a = torch.randn(size, size, device="cuda", dtype=dtype)
        b = torch.randn(size, size, device="cuda", dtype=dtype)
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            ms = _median_ms(lambda: torch.mm(a, b), 10)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev
        rates[name] = 2 * size**3 / (ms * 1e-3)
        del a, b
    torch.cuda.empty_cache()
    return {
        "copy_bytes_per_s": copy_bps,
        "matmul_flops_per_s": rates,
    }
