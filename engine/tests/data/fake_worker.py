"""A misbehaving worker for the supervisor's tests: speaks the protocol, and on
request hangs, dies, writes garbage, spawns a grandchild, or says its CUDA
context is gone. With FAKE_MEMORY=1 it answers `memory` and `forget_bundles` from
a pretend allocator (`alloc` adds `bytes` in use); without it those ops get a
reply with none of their fields, as from a worker that predates them."""
import json
import os
import subprocess
import sys
import time

memory = os.environ.get("FAKE_MEMORY") == "1"
in_use = peak = 0

for line in sys.stdin:
    req = json.loads(line)
    rid, op = req.get("id"), req.get("op")
    if op == "hang":
        time.sleep(3600)
    elif op == "die":
        sys.stderr.write("fake worker: dying on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif op == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        continue
    elif op == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        reply = {"id": rid, "ok": True, "child": child.pid}
    elif op == "alloc":
        in_use += int(req["bytes"])
        peak = max(peak, in_use)
        reply = {"id": rid, "ok": True}
    elif memory and op == "memory":
        reply = {"id": rid, "ok": True, "measured": True, "device": "cuda", "in_use_bytes": in_use,
                 "held_bytes": in_use, "peak_bytes": peak, "free_bytes": 1 << 34, "budget_bytes": 1 << 34,
                 "total_bytes": 1 << 35}
        if req.get("reset_peak"):
            peak = in_use
    elif memory and op == "forget_bundles":
        reply = {"id": rid, "ok": True, "forgotten": 0, "in_use_bytes": in_use, "held_bytes": in_use}
    elif op == "fatal":
        reply = {"id": rid, "ok": False, "fatal": True, "error": "CUDA error: an illegal memory access"}
    else:
        reply = {"id": rid, "ok": True, "op": op, "pid": os.getpid()}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
