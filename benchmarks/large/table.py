"""Print the README table of the large tier: one row per problem file, sizes from the meta device.

    python benchmarks/large/table.py [benchmarks/large]

Nothing is allocated at full size: benchmarks/suite_info.py's footprint() builds and runs each problem
on the meta device. GB here are decimal (1e9 bytes), the unit of the tier's 4-9 GB input range.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import suite_info  # noqa: E402

LARGE = Path(__file__).resolve().parent
GB = 1e9

# The op column, by file stem (the shapes and sizes come from the code).
OPS = {
    "argmax_dim1_96x5000x3001": "argmax over dim 1",
    "argmin_dim1_200x2999x2500": "argmin over dim 1",
    "avg_pool_k5_s1_p2_60x80x520x520": "avg_pool2d 5x5 stride 1 pad 2",
    "cumsum_1500x1m": "cumsum over rows",
    "group_norm_32_16x320x480x480": "GroupNorm(32, 320), affine",
    "instance_norm_80x48x600x600": "InstanceNorm2d, affine=False",
    "l1_normalize_30k_50k": "row L1 normalize",
    "l2_normalize_24k_65k": "row L2 normalize (F.normalize)",
    "layer_norm_560k_2560": "LayerNorm, last dim",
    "layer_norm_bf16_1100k_2880": "LayerNorm, last dim",
    "log_softmax_12k_128k": "row log-softmax",
    "max_pool_k3_s2_p1_50x112x500x500": "max_pool2d 3x3 stride 2 pad 1",
    "rms_norm_300k_5120": "RMSNorm, last dim",
    "softmax_24k_152k_bf16": "row softmax",
    "softmax_3k_500k": "row softmax",
    "sum_dim1_64x6000x4001": "sum over dim 1",
}


def rows(suite: Path = LARGE):
    for path in suite_info.problem_files(suite, levels=("level1",)):
        module = suite_info.load(path)
        fp = suite_info.footprint(module)
        op = OPS.get(path.stem) or module.__doc__.strip().splitlines()[0].rstrip(".")
        shapes = ", ".join("x".join(map(str, s)) for s in fp["input_shapes"])
        yield path.stem, op, shapes, fp["dtype"], fp["inputs"] / GB, fp["outputs"] / GB


def main(argv):
    suite = Path(argv[1]) if len(argv) > 1 else LARGE
    print("| stem | op | input shape | dtype | input GB | output GB |")
    print("|---|---|---|---|---:|---:|")
    for stem, op, shapes, dtype, gb_in, gb_out in rows(suite):
        print(f"| {stem} | {op} | {shapes} | {dtype} | {gb_in:.2f} | {gb_out:.3f} |")


if __name__ == "__main__":
    main(sys.argv)
