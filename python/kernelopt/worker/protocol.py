"""Request dispatch for the worker (docs/protocol.md).

A handler returns a dict that becomes the reply's payload. A handler that raises
becomes {"ok": false, "error": ...}: failures are data. When the error leaves the
CUDA context unusable (illegal address, launch failure) the reply also says
"fatal": true, and the supervisor replaces this process after reading it.
"""

from __future__ import annotations

import json
import math
import os
import traceback

PROTOCOL_VERSION = 1

# CUDA errors after which the context is poisoned for the life of the process.
_FATAL_MARKERS = (
    "illegal memory access",
    "an illegal instruction",
    "unspecified launch failure",
    "misaligned address",
    "device-side assert",
    "CUDA error: an illegal",
    "cudaErrorIllegalAddress",
    "CUBLAS_STATUS_EXECUTION_FAILED",
)

_HANDLERS = {}


def device() -> str:
    """The device this worker serves: "cuda", or "cpu" for CPU mode (KERNELOPT_DEVICE)."""
    return os.environ.get("KERNELOPT_DEVICE", "cuda")


def op(name):
    """Registers a handler for request op `name`."""

    def register(fn):
        _HANDLERS[name] = fn
        return fn

    return register


def root_cause(exc: BaseException) -> BaseException:
    """The exception that started it: torch wraps errors raised inside a compile backend
    (BackendCompilerFailed) and their first line says nothing of the cause."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        if inner is None:
            break
        exc = inner
    return exc


def is_fatal(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return any(m in text for m in _FATAL_MARKERS)


_GIB = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def _oom_record(exc: BaseException, op_name: str | None) -> dict | None:
    """{message, stage, needed_bytes, free_bytes} for an out-of-memory failure (the memory plan's own
    WorkerOOM, or torch's allocator error, whose message says what it tried and what was free)."""
    import re

    from kernelopt.worker.measure.memory import WorkerOOM

    if isinstance(exc, WorkerOOM):
        return {"message": str(exc), **exc.record()}
    text = f"{type(exc).__name__}: {exc}"
    if "OutOfMemoryError" not in text and "out of memory" not in text.lower():
        return None

    def amount(pattern: str) -> int | None:
        m = re.search(pattern, text)
        return int(float(m.group(1)) * _GIB[m.group(2)]) if m else None

    needed = amount(r"Tried to allocate (\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)")
    free = amount(r"(\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB) is free")
    oom = WorkerOOM(op_name or "the request", needed, free, " ".join(str(exc).split())[:300])
    return {"message": str(oom), **oom.record()}


def handle(req: dict) -> dict:
    rid = req.get("id")
    name = req.get("op")
    fn = _HANDLERS.get(name)
    if fn is None:
        return {"id": rid, "ok": False, "error": f"unknown op {name!r}; known: {sorted(_HANDLERS)}"}
    oom = False
    from kernelopt.worker.measure import memory

    tracked = name != "memory"  # the memory op reads and resets the peaks it would be measured by
    if tracked:
        memory.request_started()
    try:
        payload = fn(req)
    except Exception as exc:  # a failed request is a record, never a dead worker
        root = root_cause(exc)
        reply = {
            "id": rid,
            "ok": False,
            "error": f"{type(root).__name__}: {root}"[:4000],
            "traceback": traceback.format_exc()[-4000:],
        }
        if (record := _oom_record(root, name)) is not None:
            oom = True
            reply.update(error=record.pop("message")[:4000], failure="oom", oom=record)
        if is_fatal(exc) or is_fatal(root):
            reply["fatal"] = True
    else:
        reply = None
    if tracked:
        memory.request_ended(name)
    if oom:
        # The failed request's tensors died with its frames: give their memory back now, so the
        # next request (the next problem of a suite) starts from what the worker holds.
        memory.release_cache()
    if reply is not None:
        return reply
    reply = {"id": rid, "ok": True}
    reply.update(payload or {})
    return reply


def _finite(v):
    """`v` with every non-finite float written as a string ("inf", "-inf", "nan")."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def reply_line(reply: dict) -> str:
    """One reply as a JSON line the engine can parse: JSON has no Infinity or NaN (Python writes them,
    the engine's parser refuses the whole line), so a reply holding one, such as a difference that
    overflowed on one side only, carries it as a string rather than losing the reply."""
    try:
        return json.dumps(reply, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(reply), default=str, allow_nan=False)


def serve(inp, out) -> int:
    """Answers requests until `shutdown` or the end of `inp`. The handlers are whatever modules the
    caller imported registered with @op (__main__ imports the worker's op modules, ops/): the registry
    imports nothing of theirs, so no op module's import of this one closes a cycle."""
    for line in inp:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as exc:
            out.write(json.dumps({"id": None, "ok": False, "error": f"bad request JSON: {exc}"}) + "\n")
            continue
        if req.get("op") == "shutdown":
            out.write(json.dumps({"id": req.get("id"), "ok": True}) + "\n")
            return 0
        out.write(reply_line(handle(req)) + "\n")
        out.flush()
    return 0
