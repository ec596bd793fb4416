"""Poisoning pure outputs before a run (docs/gates.md, G2 and G4).

An element the kernel never writes must not pass as correct because the buffer
happened to hold the right value. Two fills, because one is not enough:

- "nan": NaN for floats, the most negative value for integers, True for bools —
  an unwritten element shows as a NaN/extreme-value mismatch;
- "garbage": finite pseudo-random values of a plausible size (normal floats,
  small integers, random bools) — a candidate that skips its work wherever the
  output "looks already written" (not NaN) is caught, which a NaN fill alone
  cannot do.

The garbage comes from a generator seeded by `seed`, so the original and the
candidate see the same fill and elements that neither writes compare equal.
"""

from __future__ import annotations

import torch

FILLS = ("nan", "garbage")


def poison(t: torch.Tensor, fill: str = "nan", seed: int = 0) -> None:
    if fill == "nan":
        if t.is_floating_point():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.fill_(torch.iinfo(t.dtype).min)
        return
    if fill != "garbage":
        raise ValueError(f"poison fill {fill!r}; use one of {FILLS}")
    # Generated on the tensor's own device (a GB-sized output takes milliseconds there), in fixed
    # slices of its storage: a whole float32 draw and its cast beside a bf16 output were three times
    # the output's bytes (G2's peak). Fixed, never sized by free memory, so the fill is the same
    # wherever it runs; the original and the candidate get the same layout, hence the same fill.
    from .memory import bounded_parts, flat_view

    gen = torch.Generator(device=t.device).manual_seed(0x6A5B + seed)
    flat = flat_view(t)
    # A layout with gaps (a padded buffer): slices along its dimensions, never one whole-tensor draw.
    parts = [p for (p,) in bounded_parts((t,), _SLICE)] if flat is None else flat.split(_SLICE)
    for part in parts:
        if t.is_floating_point():
            vals = torch.randn(part.shape, generator=gen, device=t.device, dtype=torch.float32)  # float32: cheap
        elif t.dtype == torch.bool:
            vals = torch.rand(part.shape, generator=gen, device=t.device) < 0.5
        else:
            info = torch.iinfo(t.dtype)
            vals = torch.randint(max(info.min, -1000), min(info.max, 1000) + 1, part.shape, generator=gen,
                                 device=t.device)
        part.copy_(vals.to(t.dtype))


# Elements drawn at once by the garbage fill (16 MB of float32): a fixed size, so the original and the
# candidate see the same fill whatever is free.
_SLICE = 1 << 22


def poison_args(args: list, indices, fill: str = "nan", seed: int = 0) -> None:
    """Poisons the tensor arguments at `indices` (the kernel's pure outputs)."""
    for i in indices:
        if isinstance(args[i], torch.Tensor):
            poison(args[i], fill, seed + i)
