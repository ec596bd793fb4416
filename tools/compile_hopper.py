#!/usr/bin/env python3
"""Compile every Triton kernel of an Inductor-style module for a Hopper GPU (sm_90) on a machine without one.

    python tools/compile_hopper.py FILE.py [FILE.py ...] [--kernel SUFFIX] [--arch 90]

A FILE is a whole module (Inductor's output, a stitched candidate module, `kernelopt candidates --regions`) or one
kernel's source with its decorator (a kernel candidate as `kernelopt candidates` writes it).

The Triton interpreter (CPU mode) runs a kernel's Python; it does not type-check it as the compiler does, so a
candidate can pass G1-G3 in CPU mode and fail to compile on the GPU (session 36: a name reassigned inside an `if`
with another shape, `[XBLOCK, 32]` over `[XBLOCK, 2048]`, failed every G2 run there). Triton compiles for a
target without a device (its frontend, its passes and the bundled ptxas), so this catches that class on the CPU.

Each kernel is the source of an `async_compile.triton('name', '''...''')` call: its `@triton_heuristics` decorator
dropped, its signature and constexpr values read from the decorator's `triton_meta` and `config`. `--kernel`
keeps only kernels whose names end with SUFFIX. Prints a line per kernel; exit status 1 when any failed to
compile (its error's last line printed), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path

KERNEL = re.compile(r"async_compile\.triton\('(\w+)', '''(.*?)'''", re.S)
DECORATOR = re.compile(r"@triton_heuristics\.\w+\(.*?\n\)\n(?=@triton\.jit)", re.S)


JIT_DEF = re.compile(r"@triton\.jit\ndef (\w+)\(")


def kernels(text: str) -> list[tuple[str, str]]:
    """(name, source) of each kernel: the module's `async_compile.triton` sources, or the file itself when it is
    one kernel's source."""
    found = [(m.group(1), m.group(2)) for m in KERNEL.finditer(text)]
    if not found:
        # The entry is the kernel Inductor's metadata names, else the last @triton.jit function (helpers, such as
        # a scan's combine function, come before it).
        named = re.search(r"'kernel_name': '(\w+)'", text)
        defs = JIT_DEF.findall(text)
        if named and named.group(1) in defs:
            found = [(named.group(1), text)]
        elif defs:
            found = [(defs[-1], text)]
    return found


class Skipped(Exception):
    """A kernel left to Inductor's autotuner (no fixed config): nothing to compile it with."""


def compile_one(name: str, source: str, arch: int, tmp: Path) -> str | None:
    """None when it compiled, else the error's last line; raises Skipped for an autotuned kernel."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = re.search(r"'signature': (\{.*?\})", source)
    cfg = re.search(r"config=(\{.*?\}),\n", source) or re.search(r"configs=\[(\{.*?\})", source)
    if not sig:
        return "no triton_meta signature in the kernel's decorator"
    signature = ast.literal_eval(sig.group(1))
    config = ast.literal_eval(cfg.group(1)) if cfg else {}
    if any(v == "constexpr" and k not in config for k, v in signature.items()) and "fixed_config" not in source:
        raise Skipped()
    text = DECORATOR.sub("", source).replace("triton_helpers.set_driver_to_gpu()", "")
    path = tmp / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"kopt_hopper_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        fn = getattr(mod, name)
        constexprs = {k: config[k] for k, v in signature.items() if v == "constexpr" and k in config}
        missing = [k for k, v in signature.items() if v == "constexpr" and k not in config]
        if missing:
            return f"no value for constexpr {', '.join(missing)} in the decorator's config"
        opts = {"num_warps": config.get("num_warps", 4), "num_stages": config.get("num_stages", 1)}
        triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", arch, 32), options=opts)
    except Exception as e:  # the compiler's own error is the finding
        lines = [l for l in str(e).strip().splitlines() if l.strip()]
        return f"{type(e).__name__}: {lines[-1] if lines else ''}"
    return None


def main(argv: list[str]) -> int:
    # Compiled, not interpreted: with TRITON_INTERPRET=1 (CPU mode's setting) @triton.jit builds interpreter
    # functions, which have nothing to compile.
    os.environ.pop("TRITON_INTERPRET", None)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="+", type=Path)
    ap.add_argument("--kernel", default="", help="only kernels whose names end with this")
    ap.add_argument("--arch", type=int, default=90, help="compute capability as one number (90: Hopper)")
    a = ap.parse_args(argv)
    failed = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.modules:
            if not m.is_file():
                print(f"compile_hopper: {m}: no such file; pass Inductor-style module files", file=sys.stderr)
                return 2
            for name, source in kernels(m.read_text()):
                if not name.endswith(a.kernel):
                    continue
                try:
                    err = compile_one(name, source, a.arch, Path(tmp))
                except Skipped:
                    print(f"{m}: {name}: skipped (autotuned: no fixed config)", flush=True)
                    continue
                total += 1
                failed += err is not None
                print(f"{m}: {name}: {'compiled for sm_%d' % a.arch if err is None else 'FAILED: ' + err}", flush=True)
    if total == 0:
        print("compile_hopper: no kernel with a fixed config matched; check --kernel", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
