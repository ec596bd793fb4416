"""A reduction over the strided dimension: out[j] = sum_i x[i, j], two kernels — partial sums of row
blocks into a workspace, then a second kernel folding the partials (a standalone Triton kernel file with
two launches, docs/inputs.md)."""
import torch
import triton
import triton.language as tl

ROWS, COLS = 512, 256
ROW_BLOCK = 64


@triton.jit
def partial_sum_kernel(x_ptr, part_ptr, rows, cols, ROWS_PER: tl.constexpr, BLOCK_C: tl.constexpr):
    pr = tl.program_id(0)
    rc = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for i in range(0, ROWS_PER):
        r = pr * ROWS_PER + i
        acc += tl.load(x_ptr + r * cols + rc, mask=(rc < cols) & (r < rows), other=0.0)
    tl.store(part_ptr + pr * cols + rc, acc, mask=rc < cols)


@triton.jit
def fold_kernel(part_ptr, out_ptr, parts, cols, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    rc = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    rp = tl.arange(0, BLOCK_P)
    v = tl.load(part_ptr + rp[:, None] * cols + rc[None, :], mask=(rp[:, None] < parts) & (rc[None, :] < cols), other=0.0)
    tl.store(out_ptr + rc, tl.sum(v, axis=0), mask=rc < cols)


def launch(x):
    rows, cols = x.shape
    parts = triton.cdiv(rows, ROW_BLOCK)
    partial = torch.empty((parts, cols), dtype=torch.float32, device=x.device)
    out = torch.empty((cols,), dtype=torch.float32, device=x.device)
    block_c = 128
    partial_sum_kernel[(parts, triton.cdiv(cols, block_c))](x, partial, rows, cols, ROWS_PER=ROW_BLOCK, BLOCK_C=block_c)
    fold_kernel[(triton.cdiv(cols, block_c),)](partial, out, parts, cols, BLOCK_P=triton.next_power_of_2(parts),
                                               BLOCK_C=block_c)
    return out


def reference(x):
    return x.sum(dim=0)


def get_inputs():
    return [torch.randn(ROWS, COLS)]
