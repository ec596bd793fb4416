"""A scripted LLM endpoint for the tests: speaks the OpenAI-compatible chat
completions API (POST .../chat/completions) and the Anthropic Messages API
(POST .../messages), whole or streamed as server-sent events, and answers from
a script instead of a model.

A script is {"rules": [{"match": TEXT, "replies": [REPLY, ...]}], "default": REPLY}.
A request goes to the first rule whose TEXT occurs in its messages (the engine's
prompts start with "# kernelopt <role> prompt vN"); a rule's replies are used in
order and its last one repeats. A REPLY is a dict:
  text            the assistant's text (default "ok")
  status          HTTP status (default 200); with "error" as the error message
  retry_after     a Retry-After header value
  delay_s         sleep this long before answering (a hang, for timeouts)
  truncate        streams: stop after half the text, without the end event
  finish          finish/stop reason (default "stop"; "length" for a token-limit cut)
  oversize_bytes  send a body this large instead (an oversized reply)
  raw_body        send this text as the body instead of a reply, whole or streamed (a malformed 200),
                  with Content-Type `content_type` (default application/json)
  echo_key        put the request's API key into the error body (it must be scrubbed)
  input_tokens, output_tokens   usage to report (default 1000 and 500; null: report none)

Every request is kept in `server.requests` (path, headers, body). Run standalone
(`python llm_server.py SCRIPT.json`, or `--demo` for llm_scripts.demo_script())
it prints its base URL and serves until killed.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    server: "ScriptedServer"

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802
        try:
            self._post()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout under test): nothing to answer

    def do_GET(self):  # noqa: N802
        if self.path == "/stats":  # for tests of the client's concurrency limit
            with self.server.lock:
                return self._json(200, {"requests": len(self.server.requests), "max_in_flight": self.server.max_in_flight})
        self._json(404, {"error": {"message": f"no route {self.path}"}})

    def _post(self):
        with self.server.lock:
            self.server.in_flight += 1
            self.server.max_in_flight = max(self.server.max_in_flight, self.server.in_flight)
        try:
            self._answer()
        finally:
            with self.server.lock:
                self.server.in_flight -= 1

    def _answer(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        anthropic = self.path.rstrip("/").endswith("/messages")
        if not anthropic and not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.server.next_reply(body)
        with self.server.lock:
            self.server.requests.append({"path": self.path, "headers": headers, "body": body, "reply": reply})
        if reply.get("delay_s"):
            time.sleep(reply["delay_s"])
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.server.expect_key is not None and key != self.server.expect_key:
            return self._json(401, {"error": {"message": "wrong or missing API key"}})
        status = reply.get("status", 200)
        if status != 200:
            msg = reply.get("error", f"scripted {status}")
            if reply.get("echo_key"):
                msg += f" (key {key} refused)"
            extra = {"Retry-After": str(reply["retry_after"])} if "retry_after" in reply else {}
            return self._json(status, {"error": {"message": msg}}, extra)
        if reply.get("oversize_bytes"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(reply["oversize_bytes"]))
            self.end_headers()
            chunk = b"x" * 65536
            left = reply["oversize_bytes"]
            try:
                while left > 0:
                    self.wfile.write(chunk[: min(left, len(chunk))])
                    left -= len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as it should
            return
        if "raw_body" in reply:
            data = reply["raw_body"].encode()
            self.send_response(200)
            self.send_header("Content-Type", reply.get("content_type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        model = body.get("model", "scripted")
        if body.get("stream"):
            return self._stream(anthropic, model, reply)
        return self._json(200, _whole(anthropic, model, reply))

    def _json(self, status, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, anthropic, model, reply):
        # HTTP/1.0 without a length: the body ends when the connection closes, so a
        # truncated stream is a connection that closes before the end event.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        text = reply.get("text", "ok")
        pieces = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
        if reply.get("truncate"):
            pieces = pieces[: max(1, len(pieces) // 2)]
        fin = reply.get("finish", "stop" if not anthropic else "end_turn")
        usage_in, usage_out = reply.get("input_tokens", 1000), reply.get("output_tokens", 500)

        def send(obj, event=None):
            head = f"event: {event}\n" if event else ""
            self.wfile.write(f"{head}data: {json.dumps(obj) if not isinstance(obj, str) else obj}\n\n".encode())
            self.wfile.flush()

        if anthropic:
            usage = {} if usage_in is None else {"input_tokens": usage_in, "output_tokens": 1}
            send({"type": "message_start", "message": {"model": model, "usage": usage}}, "message_start")
            send({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
            for p in pieces:
                send({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}})
            if reply.get("truncate"):
                return
            send({"type": "content_block_stop", "index": 0})
            md = {"type": "message_delta", "delta": {"stop_reason": fin}}
            if usage_out is not None:
                md["usage"] = {"output_tokens": usage_out}
            send(md)
            send({"type": "message_stop"})
            return
        for p in pieces:
            send({"model": model, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]})
        if reply.get("truncate"):
            return
        send({"model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": fin}]})
        if usage_in is not None:
            send({"model": model, "choices": [], "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out}})
        send("[DONE]")


def _whole(anthropic, model, reply):
    text = reply.get("text", "ok")
    usage_in, usage_out = reply.get("input_tokens", 1000), reply.get("output_tokens", 500)
    if anthropic:
        out = {"type": "message", "model": model, "role": "assistant", "content": [{"type": "text", "text": text}],
               "stop_reason": reply.get("finish", "end_turn")}
        if usage_in is not None:
            out["usage"] = {"input_tokens": usage_in, "output_tokens": usage_out}
        return out
    out = {"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": reply.get("finish", "stop")}]}
    if usage_in is not None:
        out["usage"] = {"prompt_tokens": usage_in, "completion_tokens": usage_out}
    return out


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: dict, expect_key: str | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.expect_key = expect_key
        self.requests: list[dict] = []
        self.in_flight = self.max_in_flight = 0  # requests being answered now / at most at once
        self.lock = threading.Lock()
        self._used: dict[int, int] = {}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_reply(self, body: dict) -> dict:
        text = json.dumps(body.get("messages", [])) + json.dumps(body.get("system", ""))
        with self.lock:
            for n, rule in enumerate(self.script.get("rules", [])):
                if rule["match"] in text:
                    i = self._used.get(n, 0)
                    self._used[n] = i + 1
                    return rule["replies"][min(i, len(rule["replies"]) - 1)]
        return self.script.get("default", {"text": "ok"})

    def roles(self) -> list[str]:
        """The role of each request received, in order (from the prompt's first line)."""
        out = []
        for r in self.requests:
            text = json.dumps(r["body"].get("messages", []))
            i = text.find("# kernelopt ")
            out.append(text[i + 12 :].split(" ", 1)[0] if i >= 0 else "?")
        return out

    def __enter__(self):
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--demo"]:
        from llm_scripts import demo_script

        script = demo_script()
    else:
        with open(sys.argv[1]) as f:
            script = json.load(f)
    with ScriptedServer(script) as s:
        print(s.url, flush=True)
        threading.Event().wait()
