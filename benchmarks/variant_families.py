"""The op families of benchmarks/variants.py: each draws one problem's operator and parameters.

A family function takes a `random.Random` and a dtype name and returns a `Draft`: the operator, its
parameters, the extent constraints of each dim of its main input (`Dim`), how each input is made and
the Model's code. Sizes are not chosen here: variants.py fits the dims to a drawn byte count (and
shrinks them for `--scale small`), so the same draft serves every size. Generated code reads every
size from the module constant SHAPE at call time, the convention of benchmarks/suite.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

# Extent kinds a dim is rounded to; odd and prime extents are what fixed suites lack most.
KINDS = ("prime", "odd", "pow2", "mult8", "any")
KIND_WEIGHTS = (3, 3, 1, 2, 1)


@dataclass
class Dim:
    lo: int  # smallest legal extent (a pool's effective window, a reduced axis of at least 2)
    hi: int
    kind: str = "any"  # drawn from KINDS by the family
    weight: float = 1.0  # share of the byte budget, drawn by the family
    multiple: int = 1  # extents must be multiples of this (GroupNorm's channels)


@dataclass
class Input:
    make: str  # randn | rand | walk (values near 1, for products) | log_softmax | softmax | classes
    dim: int = -1  # the logical dim a walk or a (log-)softmax runs along


@dataclass
class Draft:
    family: str
    op: str  # what the file name and manifest call it
    params: dict  # JSON-able operator parameters, also written as module constants
    description: str
    dims: list[Dim]
    inputs: list[Input]
    forward: str  # the expression forward() returns, over its arguments a, b, ...
    layouts: tuple = ("contiguous", "transposed")
    init: list[str] = field(default_factory=list)  # Model.__init__ body lines (weights)


def draw_dims(rng: random.Random, n: int, lo: int = 2, hi: int = 1 << 24) -> list[Dim]:
    return [Dim(lo, hi, kind=rng.choices(KINDS, KIND_WEIGHTS)[0], weight=rng.uniform(0.3, 1.0)) for _ in range(n)]


def _dim_name(d: int, rank: int) -> str:
    return {0: "outer", rank - 1: "inner"}.get(d, "middle")


def _axis(rng: random.Random, rank: int, kinds=("inner", "outer", "middle")) -> int:
    kinds = [k for k in kinds if k != "middle" or rank >= 3]
    kind = rng.choice(kinds)
    return {"inner": rank - 1, "outer": 0}.get(kind) if kind != "middle" else rng.randint(1, rank - 2)


def pools(rng: random.Random, dtype: str) -> Draft:
    kind = rng.choice(("max", "avg"))
    nd = rng.choice((1, 2, 3))
    square = rng.random() < 0.5
    kmax = 4 if nd == 3 else 7

    def per_dim(f):
        v = [f() for _ in range(nd)]
        return [v[0]] * nd if square else v

    kernel = per_dim(lambda: rng.randint(1 if nd == 1 else 2, kmax))
    stride = [rng.randint(1, k + 1) for k in kernel] if rng.random() < 0.7 else list(kernel)
    padding = [rng.randint(0, k // 2) if rng.random() < 0.6 else 0 for k in kernel]
    dilation = [rng.choice((1, 1, 1, 2, 3)) for _ in kernel] if kind == "max" else [1] * nd
    ceil_mode = rng.random() < 0.4
    params = {"kernel_size": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil_mode}
    call = f"F.{kind}_pool{nd}d(a, KERNEL_SIZE, stride=STRIDE, padding=PADDING"
    if kind == "max":
        params["dilation"] = dilation
        call += ", dilation=DILATION"
    else:
        params["count_include_pad"] = rng.random() < 0.5
        call += ", count_include_pad=COUNT_INCLUDE_PAD"
    call += ", ceil_mode=CEIL_MODE)"
    for key in ("kernel_size", "stride", "padding", "dilation"):
        if key in params and len(set(params[key])) == 1:
            params[key] = params[key][0]
    effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    spatial_hi = {1: 1 << 22, 2: 4096, 3: 384}[nd]
    dims = draw_dims(rng, 2, lo=1, hi=4096) + [Dim(max(e, 2), spatial_hi, kind=rng.choices(KINDS, KIND_WEIGHTS)[0],
                                                   weight=rng.uniform(1.0, 2.0)) for e in effective]
    desc = f"{kind}_pool{nd}d, " + ", ".join(f"{k}={v}" for k, v in params.items())
    layouts = ("contiguous", "transposed") + (("channels_last",) if nd >= 2 else ())
    tag = f"{kind}_pool{nd}d_k{'x'.join(map(str, kernel))}s{'x'.join(map(str, stride))}"
    return Draft("pools", tag, params, desc, dims, [Input("randn")], call, layouts)


REDUCTIONS = ("sum", "mean", "max", "min", "prod", "amax", "amin")


def reductions(rng: random.Random, dtype: str) -> Draft:
    op = rng.choice(REDUCTIONS)
    rank = rng.randint(2, 4)
    dim = _axis(rng, rank)
    keepdim = rng.random() < 0.3
    dims = draw_dims(rng, rank, lo=1)
    dims[dim].lo = 2
    if op in ("max", "min"):
        expr = f"torch.{op}(a, dim=DIM, keepdim=KEEPDIM).values"
    else:
        expr = f"torch.{op}(a, dim=DIM, keepdim=KEEPDIM)"
    make = Input("walk", dim) if op == "prod" else Input("randn")
    params = {"dim": dim, "axis": _dim_name(dim, rank), "keepdim": keepdim}
    desc = f"{op} over dim {dim} ({params['axis']}) of a {rank}-D tensor, keepdim={keepdim}"
    return Draft("reductions", f"{op}_d{dim}", params, desc, dims, [make], expr, _layouts(rank))


def arg_reductions(rng: random.Random, dtype: str) -> Draft:
    op = rng.choice(("argmax", "argmin"))
    rank = rng.randint(2, 4)
    dim = rng.randrange(rank)
    keepdim = rng.random() < 0.3
    dims = draw_dims(rng, rank, lo=1)
    dims[dim].lo = 2
    params = {"dim": dim, "axis": _dim_name(dim, rank), "keepdim": keepdim}
    desc = f"{op} over dim {dim} ({params['axis']}) of a {rank}-D tensor, keepdim={keepdim}"
    return Draft("arg_reductions", f"{op}_d{dim}", params, desc, dims, [Input("randn")],
                 f"torch.{op}(a, dim=DIM, keepdim=KEEPDIM)", _layouts(rank))


def _layouts(rank: int) -> tuple:
    return ("contiguous", "transposed") + (("channels_last",) if rank in (4, 5) else ())


# Affine weights are seeded and non-trivial (a unit weight and zero bias would hide a dropped term).
_AFFINE = [
    "torch.manual_seed(0)",
    "with torch.no_grad():",
    "    self.norm.weight.copy_(1 + 0.1 * torch.randn(self.norm.weight.shape))",
    "    self.norm.bias.copy_(0.1 * torch.randn(self.norm.bias.shape))",
]


def norms(rng: random.Random, dtype: str) -> Draft:
    op = rng.choice(("layer_norm", "rms_norm", "group_norm", "instance_norm", "batch_norm", "normalize",
                     "frobenius_normalize"))
    affine = rng.random() < 0.6
    eps = rng.choice((1e-5, 1e-6))
    if op == "layer_norm":
        k = rng.randint(1, 3)
        rank = k + rng.randint(1, 2)
        dims = draw_dims(rng, rank, lo=1)
        for d in dims[-k:]:
            d.lo = 2
        params = {"normalized_dims": k, "elementwise_affine": affine, "eps": eps}
        init = [f"self.norm = nn.LayerNorm(tuple(SHAPE[-{k}:]), eps=EPS, elementwise_affine=ELEMENTWISE_AFFINE)"]
        init += (_AFFINE if affine else []) + ["self.norm.to(DTYPE)"]
        desc = f"LayerNorm over the last {k} dim(s) of a {rank}-D tensor, affine={affine}"
        return Draft("norms", f"layer_norm{k}", params, desc, dims, [Input("randn")], "self.norm(a)",
                     _layouts(rank), init)
    if op == "rms_norm":
        rank = rng.randint(2, 3)
        dims = draw_dims(rng, rank, lo=1)
        dims[-1].lo = 2
        params = {"eps": eps, "weight": affine}
        # The Llama form: statistics in fp32, the product cast back to the input's dtype.
        expr = "(a.float() * torch.rsqrt(a.float().pow(2).mean(-1, keepdim=True) + EPS)).to(a.dtype)"
        init = []
        if affine:
            expr += " * self.weight"
            init = ["torch.manual_seed(0)", "self.weight = nn.Parameter((1 + 0.1 * torch.randn(SHAPE[-1])).to(DTYPE))"]
        desc = f"RMSNorm over the last dim of a {rank}-D tensor (fp32 statistics), weight={affine}"
        return Draft("norms", "rms_norm", params, desc, dims, [Input("randn")], expr, _layouts(rank), init)
    if op == "group_norm":
        rank = rng.randint(3, 5)
        groups = rng.choice((1, 2, 3, 4, 7, 8, 16, 32))
        dims = draw_dims(rng, rank, lo=1)
        dims[1] = Dim(groups, groups * 256, kind=rng.choice(("odd", "any", "mult8")), weight=0.5, multiple=groups)
        dims[2].lo = 2
        params = {"num_groups": groups, "affine": affine, "eps": eps}
        init = ["self.norm = nn.GroupNorm(NUM_GROUPS, SHAPE[1], eps=EPS, affine=AFFINE)"]
        init += (_AFFINE if affine else []) + ["self.norm.to(DTYPE)"]
        desc = f"GroupNorm({groups} groups) over a {rank}-D tensor, affine={affine}"
        return Draft("norms", f"group_norm_g{groups}", params, desc, dims, [Input("randn")], "self.norm(a)",
                     _layouts(rank), init)
    if op == "instance_norm":
        nd = rng.randint(1, 3)
        dims = draw_dims(rng, nd + 2, lo=1)
        dims[2].lo = 2
        params = {"spatial_dims": nd, "affine": affine, "eps": eps}
        init = [f"self.norm = nn.InstanceNorm{nd}d(SHAPE[1], eps=EPS, affine=AFFINE)"]
        init += (_AFFINE if affine else []) + ["self.norm.to(DTYPE)"]
        desc = f"InstanceNorm{nd}d, affine={affine}"
        return Draft("norms", f"instance_norm{nd}d", params, desc, dims, [Input("randn")], "self.norm(a)",
                     _layouts(nd + 2), init)
    if op == "batch_norm":
        # Training mode (nn.Module's default): each channel's statistics over the batch and every other dim,
        # then a per-channel normalize; the running statistics are updated in place.
        rank = rng.randint(2, 5)
        nd = {2: 1, 3: 1, 4: 2, 5: 3}[rank]
        dims = draw_dims(rng, rank, lo=1)
        dims[0].lo = 2
        params = {"batch_norm_dims": nd, "affine": affine, "eps": eps}
        init = [f"self.norm = nn.BatchNorm{nd}d(SHAPE[1], eps=EPS, affine=AFFINE)"]
        init += (_AFFINE if affine else []) + ["self.norm.to(DTYPE)"]
        desc = f"BatchNorm{nd}d in training mode over a {rank}-D tensor, affine={affine}"
        return Draft("norms", f"batch_norm{nd}d", params, desc, dims, [Input("randn")], "self.norm(a)",
                     _layouts(rank), init)
    if op == "normalize":
        rank = rng.randint(2, 4)
        p = rng.choice((1, 2))
        dim = rng.randrange(rank)
        dims = draw_dims(rng, rank, lo=1)
        dims[dim].lo = 2
        if p == 1 and dtype == "float16":
            dims[dim].hi = 1 << 15  # an L1 norm of a longer fp16 axis overflows fp16
        params = {"p": p, "dim": dim, "axis": _dim_name(dim, rank)}
        desc = f"F.normalize (L{p}) over dim {dim} ({params['axis']}) of a {rank}-D tensor"
        return Draft("norms", f"l{p}_normalize_d{dim}", params, desc, dims, [Input("randn")],
                     "F.normalize(a, p=P, dim=DIM)", _layouts(rank))
    rank = rng.randint(2, 4)
    whole = rng.random() < 0.3
    dims = draw_dims(rng, rank, lo=2)
    params = {"over": "whole tensor" if whole else "last two dims"}
    expr = "a / torch.linalg.vector_norm(a)" if whole else "a / torch.linalg.vector_norm(a, dim=(-2, -1), keepdim=True)"
    desc = f"Frobenius normalize over the {params['over']} of a {rank}-D tensor"
    return Draft("norms", "frobenius_normalize" + ("_all" if whole else ""), params, desc, dims, [Input("randn")],
                 expr, _layouts(rank))


def softmax(rng: random.Random, dtype: str) -> Draft:
    op = rng.choice(("softmax", "log_softmax"))
    rank = rng.randint(2, 4)
    dim = _axis(rng, rank)
    dims = draw_dims(rng, rank, lo=1)
    dims[dim].lo = 2
    params = {"dim": dim, "axis": _dim_name(dim, rank)}
    desc = f"{op} over dim {dim} ({params['axis']}) of a {rank}-D tensor"
    return Draft("softmax", f"{op}_d{dim}", params, desc, dims, [Input("randn")], f"F.{op}(a, dim=DIM)",
                 _layouts(rank))


def scans(rng: random.Random, dtype: str) -> Draft:
    op = rng.choice(("cumsum", "cumprod"))
    form = rng.choice(("plain", "reversed", "exclusive"))
    rank = rng.randint(1, 4)
    dim = _axis(rng, rank) if rank > 1 else 0
    dims = draw_dims(rng, rank, lo=1, hi=1 << 31)
    dims[dim].lo = 2
    if op == "cumsum" and dtype == "float16":
        dims[dim].hi = 1 << 24  # a running sum of randn along a longer axis leaves fp16's range
    scan = f"torch.{op}(a, dim=DIM)"
    expr = {
        "plain": scan,
        "reversed": f"torch.{op}(a.flip(DIM), dim=DIM).flip(DIM)",
        # Exclusive: each position combines the elements before it only (inputs of a walk are never 0).
        "exclusive": f"{scan} - a" if op == "cumsum" else f"{scan} / a",
    }[form]
    params = {"dim": dim, "axis": _dim_name(dim, rank) if rank > 1 else "only", "form": form}
    desc = f"{form} {op} over dim {dim} of a {rank}-D tensor"
    make = Input("walk", dim) if op == "cumprod" else Input("randn")
    tag = {"plain": "", "reversed": "_rev", "exclusive": "_excl"}[form]
    return Draft("scans", f"{op}{tag}_d{dim}", params, desc, dims, [make], expr,
                 _layouts(rank) if rank > 1 else ("contiguous",))


LOSSES = ("cross_entropy", "smooth_l1", "huber", "mse", "l1", "kl_div", "cosine_similarity", "bce_with_logits")


def losses(rng: random.Random, dtype: str) -> Draft:
    op = rng.choice(LOSSES)
    # A sum over GBs of fp16 elements overflows fp16's 65504: fp16 losses are means.
    low_range = dtype == "float16"
    reduction = "mean" if low_range else rng.choice(("mean", "sum"))
    if op == "cross_entropy":
        rank = rng.randint(2, 3)
        dims = draw_dims(rng, rank, lo=1)
        dims[1] = Dim(2, 1 << 18, kind=rng.choices(KINDS, KIND_WEIGHTS)[0], weight=rng.uniform(1.0, 2.0))
        smoothing = 0.0 if low_range else rng.choice((0.0, 0.0, 0.1))  # its sum over all logits overflows fp16
        params = {"reduction": reduction, "label_smoothing": smoothing}
        desc = f"cross entropy over {rank}-D logits (classes on dim 1), {reduction}, label_smoothing={smoothing}"
        return Draft("losses", "cross_entropy", params, desc, dims, [Input("randn"), Input("classes")],
                     "F.cross_entropy(a, b, reduction=REDUCTION, label_smoothing=LABEL_SMOOTHING)", _layouts(rank))
    rank = rng.randint(2, 4)
    dims = draw_dims(rng, rank, lo=1)
    dims[-1].lo = 2
    params = {"reduction": reduction}
    inputs = [Input("randn"), Input("randn")]
    if op == "smooth_l1":
        params["beta"] = rng.choice((1.0, 0.5))
        expr = "F.smooth_l1_loss(a, b, reduction=REDUCTION, beta=BETA)"
    elif op == "huber":
        params["delta"] = rng.choice((1.0, 0.5, 2.0))
        expr = "F.huber_loss(a, b, reduction=REDUCTION, delta=DELTA)"
    elif op in ("mse", "l1"):
        expr = f"F.{op}_loss(a, b, reduction=REDUCTION)"
    elif op == "kl_div":
        params["reduction"] = rng.choice(("batchmean", "sum"))
        params["log_target"] = rng.random() < 0.3
        inputs = [Input("log_softmax"), Input("log_softmax" if params["log_target"] else "softmax")]
        # In fp16 the loss is taken in fp32, as distillation code does (its sum overflows fp16).
        expr = "F.kl_div({}, reduction=REDUCTION, log_target=LOG_TARGET)".format(
            "a.float(), b.float()" if low_range else "a, b")
    elif op == "cosine_similarity":
        params["dim"] = rng.randrange(rank)
        dims[params["dim"]].lo = 2
        expr = "(1 - F.cosine_similarity(a, b, dim=DIM)).mean()" if reduction == "mean" else \
            "(1 - F.cosine_similarity(a, b, dim=DIM)).sum()"
    else:
        inputs = [Input("randn"), Input("rand")]
        expr = "F.binary_cross_entropy_with_logits(a, b, reduction=REDUCTION)"
    desc = f"{op} loss over two {rank}-D tensors, " + ", ".join(f"{k}={v}" for k, v in params.items())
    return Draft("losses", op, params, desc, dims, inputs, expr, _layouts(rank))


FAMILIES = {
    "pools": pools,
    "reductions": reductions,
    "arg_reductions": arg_reductions,
    "norms": norms,
    "softmax": softmax,
    "scans": scans,
    "losses": losses,
}
