"""A misbehaving worker for the supervisor's tests: speaks the protocol, and on
request hangs, dies, writes garbage, spawns a grandchild, or says its CUDA
context is gone."""
import json
import os
import subprocess
import sys
import time

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
    elif op == "fatal":
        reply = {"id": rid, "ok": False, "fatal": True, "error": "CUDA error: an illegal memory access"}
    else:
        reply = {"id": rid, "ok": True, "op": op, "pid": os.getpid()}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
