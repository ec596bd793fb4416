"""Request dispatch for the worker (docs/protocol.md).

A handler returns a dict that becomes the reply's payload. A handler that raises
becomes {"ok": false, "error": ...}: failures are data. When the error leaves the
CUDA context unusable (illegal address, launch failure) the reply also says
"fatal": true, and the supervisor replaces this process after reading it.
"""

from __future__ import annotations

import json
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


def op(name):
    """Registers a handler for request op `name`."""

    def register(fn):
        _HANDLERS[name] = fn
        return fn

    return register


def _root_cause(exc: BaseException) -> BaseException:
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


def _is_fatal(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return any(m in text for m in _FATAL_MARKERS)


def handle(req: dict) -> dict:
    rid = req.get("id")
    name = req.get("op")
    fn = _HANDLERS.get(name)
    if fn is None:
        return {"id": rid, "ok": False, "error": f"unknown op {name!r}; known: {sorted(_HANDLERS)}"}
    try:
        payload = fn(req)
    except Exception as exc:  # a failed request is a record, never a dead worker
        root = _root_cause(exc)
        reply = {
            "id": rid,
            "ok": False,
            "error": f"{type(root).__name__}: {root}"[:4000],
            "traceback": traceback.format_exc()[-4000:],
        }
        if _is_fatal(exc) or _is_fatal(root):
            reply["fatal"] = True
        return reply
    reply = {"id": rid, "ok": True}
    reply.update(payload or {})
    return reply


def serve(inp, out) -> int:
    # Register the handlers (import for side effects).
    from kernelopt.worker import bench_ops, bundle_ops, gpu_ops, ops, search_ops  # noqa: F401

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
        out.write(json.dumps(handle(req), default=str) + "\n")
        out.flush()
    return 0
