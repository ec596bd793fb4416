"""Scripted LLM replies for corpus/gelu_scale (out = 0.75 * gelu(x) + bias[col]):
kernels a model might write — correct, correct but slower, wrong, not parsing,
two in one reply — and the demo script `llm_server.py --demo` serves (for a
run on a GPU without any model: the LLM candidates are screened and timed like
every other candidate).
"""

import json


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code.rstrip()}\n```\n"


ENTRY = "def triton_poi_fused_add_gelu_mul_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code.rstrip()}\n```\n"


# out = 0.75 * gelu(x) + b[col]: a correct rewrite (masked, so right for any XBLOCK).
CORRECT = ENTRY + """    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x = tl.load(in_ptr0 + xindex, xmask)
    b = tl.load(in_ptr1 + (xindex % 256), xmask, eviction_policy='evict_last')
    y = (0.5 * 0.75) * x * (1.0 + tl.erf(x * 0.7071067811865476)) + b
    tl.store(out_ptr0 + xindex, y, xmask)
"""
# Also correct, with a wasteful second pass over the bias (slower on a GPU; equal in CPU mode).
SLOWER = ENTRY + """    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x = tl.load(in_ptr0 + xindex, xmask)
    b = tl.load(in_ptr1 + (xindex % 256), xmask)
    b2 = tl.load(in_ptr1 + (xindex % 256), xmask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)) * 0.75 + 0.5 * (b + b2)
    tl.store(out_ptr0 + xindex, y, xmask)
"""
# Forgets the 0.75 scale: runs, computes something else (G2).
WRONG = CORRECT.replace("(0.5 * 0.75)", "0.5")
# Does not parse (G1).
BROKEN = ENTRY + "    xindex = tl.program_id(0) * XBLOCK + (\n    tl.store(out_ptr0 + xindex, 0.0)\n"
TWO_KERNELS = "@triton.jit\n" + CORRECT + "\n@triton.jit\n" + SLOWER.replace("triton_poi_fused", "other")

PROFILE = fenced('{"bottleneck": "memory", "explanation": "one read of x, one write of out; the bias is cached"}', "json")
PLAN = fenced('{"strategies": ["rewrite"], "ideas": ["mask the tail so any XBLOCK works", "fold 0.5*0.75"]}', "json")


def demo_script() -> dict:
    """Correct rewrites (faster and slower), a wrong one for the reviewer to repair, and configs for the tuner."""
    configs = {"configs": [{"XBLOCK": 1024, "num_warps": 4}, {"XBLOCK": 512, "num_warps": 4},
                           {"XBLOCK": 2048, "num_warps": 8}]}
    plan = fenced(json.dumps({"strategies": ["rewrite", "config"], "ideas": ["mask the tail", "fold the constants"]}),
                  "json")
    return {"rules": [
        {"match": "# kernelopt profiler prompt", "replies": [{"text": PROFILE}]},
        {"match": "# kernelopt planner prompt", "replies": [{"text": plan}]},
        {"match": "# kernelopt coder prompt", "replies": [{"text": fenced(CORRECT)}, {"text": fenced(SLOWER)},
                                                          {"text": fenced(WRONG)}]},
        {"match": "# kernelopt reviewer prompt", "replies": [{"text": fenced(CORRECT)}]},
        {"match": "# kernelopt tuner prompt", "replies": [{"text": fenced(json.dumps(configs), "json")}]},
    ]}


# corpus/group_norm's one region (statistics buf0, buf1, then the normalize into buf3) as one kernel, the way a
# model might write it: the mean, then the centred variance, then the normalize, three loops over each row.
REGION_ENTRY = ("def triton_region_g0_r0(arg2_1, arg0_1, arg1_1, buf3, xnumel, r0_numel, XBLOCK : tl.constexpr, "
                "R0_BLOCK : tl.constexpr):\n")
REGION_CORRECT = REGION_ENTRY + """    xnumel = 32
    r0_numel = 2048
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    rmask = rows < xnumel
    cols = tl.arange(0, R0_BLOCK)[None, :]
    acc = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for off in range(0, r0_numel, R0_BLOCK):
        m = rmask & (off + cols < r0_numel)
        acc += tl.load(arg2_1 + rows * r0_numel + off + cols, m, other=0.0)
    mean = tl.sum(acc, 1)[:, None] / r0_numel
    acc2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for off in range(0, r0_numel, R0_BLOCK):
        m = rmask & (off + cols < r0_numel)
        d = tl.load(arg2_1 + rows * r0_numel + off + cols, m, other=0.0) - mean
        acc2 += tl.where(m, d * d, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, 1)[:, None] / r0_numel + 1e-05)
    for off in range(0, r0_numel, R0_BLOCK):
        m = rmask & (off + cols < r0_numel)
        e = rows * r0_numel + off + cols
        ch = (e // 256) % 64
        x = tl.load(arg2_1 + e, m, other=0.0)
        w = tl.load(arg0_1 + ch, m, other=0.0)
        b = tl.load(arg1_1 + ch, m, other=0.0)
        tl.store(buf3 + e, (x - mean) * rstd * w + b, m)
"""
# Drops the shift: runs, writes something else (G2).
REGION_WRONG = REGION_CORRECT.replace("rstd * w + b", "rstd * w")
# Passes an internal buffer the fused launch can no longer have.
REGION_INTERNAL = REGION_CORRECT.replace("arg1_1, buf3, xnumel", "arg1_1, buf3, buf0, xnumel")
