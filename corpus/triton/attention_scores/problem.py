"""An attention piece: scores = softmax(q @ k^T * scale) for one block of queries per program, the whole
key sequence in registers (a standalone Triton kernel file, docs/inputs.md)."""
import torch
import triton
import triton.language as tl

HEADS, SEQ, DIM = 4, 128, 32


@triton.jit
def attention_scores_kernel(q_ptr, k_ptr, p_ptr, seq, scale, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr,
                            BLOCK_KV: tl.constexpr):
    head = tl.program_id(1)
    rq = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    rk = tl.arange(0, BLOCK_KV)
    rd = tl.arange(0, HEAD_DIM)
    base = head * seq * HEAD_DIM
    q = tl.load(q_ptr + base + rq[:, None] * HEAD_DIM + rd[None, :], mask=rq[:, None] < seq, other=0.0)
    k = tl.load(k_ptr + base + rk[:, None] * HEAD_DIM + rd[None, :], mask=rk[:, None] < seq, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    s = tl.where(rk[None, :] < seq, s, -float("inf"))
    s = s - tl.max(s, axis=1)[:, None]
    e = tl.exp(s)
    p = e / tl.sum(e, axis=1)[:, None]
    tl.store(p_ptr + head * seq * seq + rq[:, None] * seq + rk[None, :], p, mask=(rq[:, None] < seq) & (rk[None, :] < seq))


def launch(q, k):
    heads, seq, dim = q.shape
    p = torch.empty((heads, seq, seq), dtype=q.dtype, device=q.device)
    block_q = 32
    attention_scores_kernel[(triton.cdiv(seq, block_q), heads)](
        q, k, p, seq, dim ** -0.5, HEAD_DIM=dim, BLOCK_Q=block_q, BLOCK_KV=triton.next_power_of_2(seq))
    return p


def reference(q, k):
    return torch.softmax(q @ k.transpose(1, 2) * q.shape[-1] ** -0.5, dim=-1)


def get_inputs():
    return [torch.randn(HEADS, SEQ, DIM), torch.randn(HEADS, SEQ, DIM)]
