"""LLM agents against a scripted local endpoint (llm_server.py), no model needed.

`kernelopt llm check` exercises the client: both protocols, streamed and whole,
retries on 429 (honouring Retry-After) and 500, a hang past the timeout, an
oversized reply, a truncated stream and a malformed 200 (named as such, kept in
the transcript as received). `kernelopt optimize --agents llm` in
CPU mode runs scripted replies — a correct rewrite of the corpus kernel, a
wrong one, one that does not compile, prose without code, two kernels in one
reply — through the same cascade as every candidate; the budget stops requests
once spent; and the API key (a distinctive fake) never appears in any output.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_scripts import BROKEN, CORRECT, PLAN, SLOWER, TWO_KERNELS, WRONG, fenced  # noqa: E402
from llm_server import ScriptedServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "corpus" / "gelu_scale"
KEY = "sk-kopt-FAKE-KEY-3b9f2c7e1d4a8056"


def write_config(tmp: Path, url: str, **budget) -> Path:
    cfg = tmp / "kernelopt.toml"
    lines = ["[llm]", 'provider = "openai"', f'endpoint = "{url}"', 'model = "scripted-coder"',
             'api_key_env = "KOPT_TEST_LLM_KEY"', "coder_proposals = 4", "timeout_s = 30", "backoff_base_s = 0.05",
             "[llm.budget]", "price_input_per_mtok = 3.0", "price_output_per_mtok = 15.0"]
    lines += [f"{k} = {v}" for k, v in budget.items()]
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


def run_optimize(kernelopt_bin, tmp: Path, cfg: Path, *extra, agents=("--agents", "llm")):
    env = dict(os.environ, KOPT_TEST_LLM_KEY=KEY)
    cmd = [kernelopt_bin, "optimize", str(BUNDLE), "--device", "cpu", *agents, "--config", str(cfg),
           "--out", str(tmp / "out"), "--db", str(tmp / "results.db"), "--seeds", "2", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def assert_key_absent(tmp: Path, *streams: str):
    for s in streams:
        assert KEY not in s
    for p in tmp.rglob("*"):
        if p.is_file():
            assert KEY.encode() not in p.read_bytes(), p


def test_scripted_candidates_flow_through_the_cascade(kernelopt_bin, tmp_path):
    script = {"rules": [
        {"match": "# kernelopt profiler prompt", "replies": [{"status": 400, "error": "bad request", "echo_key": True}]},
        {"match": "# kernelopt planner prompt", "replies": [{"text": PLAN}]},
        {"match": "# kernelopt coder prompt", "replies": [
            {"text": "I would fuse the scale into the GELU and mask the tail; that should be faster."},
            {"text": fenced(BROKEN)},
            {"text": fenced(WRONG)},
            {"text": fenced(TWO_KERNELS)},
        ]},
        {"match": "# kernelopt reviewer prompt", "replies": [{"text": "The scale was lost; fixed:\n" + fenced(CORRECT)},
                                                             {"text": fenced(SLOWER)}]},
    ]}
    with ScriptedServer(script, expect_key=KEY) as server:
        cfg = write_config(tmp_path, server.url)
        r = run_optimize(kernelopt_bin, tmp_path, cfg, "--max-cascades", "4")
    assert r.returncode == 0, r.stderr
    # The key reached the endpoint (else every request would have been a 401) ...
    assert server.roles()[:2] == ["profiler", "planner"] and server.roles().count("coder") == 4
    assert all(q["headers"]["authorization"] == f"Bearer {KEY}" for q in server.requests)
    # ... and nowhere else, though the endpoint echoed it back in an error.
    assert_key_absent(tmp_path, r.stdout, r.stderr)

    out = tmp_path / "out"
    report = json.loads((out / "report.json").read_text())
    assert report["agents"] == "llm"
    (kernel,) = report["kernels"]
    cands = {c["id"]: c for c in kernel["candidates"]}
    by_origin = [(c["origin"], c["outcome"], c["failed_gate"]) for c in kernel["candidates"]]
    # Only parsable replies became candidates: the broken one fails G1, the reviewer's repair of it
    # passes G1-G3 (G4 is not measured in CPU mode), the wrong one fails G2.
    assert by_origin == [("llm:rewrite", "rejected", "G1"), ("llm:rewrite", "rejected", "G2"),
                         ("llm:review", "accepted", None)], by_origin
    assert kernel["accepted"] and cands[kernel["chosen"]]["origin"] == "llm:review"
    assert cands[kernel["chosen"]]["parent"] == "c1"
    assert "mask the tail so any XBLOCK works" in kernel["llm_ideas"] and "llm_explanation" not in kernel
    assert [g["gate"] for g in cands[kernel["chosen"]]["gates"]] == ["G1", "G2", "G3", "G4"]
    assert "tl.erf(x * 0.7071067811865476)" in (out / "module_0.py").read_text()

    lines = [json.loads(x) for x in (out / "transcripts.jsonl").read_text().splitlines()]
    coder = [x for x in lines if x["role"] == "coder"]
    assert [x["outcome"] for x in coder] == ["unparsable", "proposed", "proposed", "unparsable"]
    assert "prose without code" in coder[0]["reason"] and "several kernels" in coder[3]["reason"]
    assert coder[1]["prompt_version"] == "coder/v1" and coder[1]["input_tokens"] == 1000
    assert "an earlier reply: unparsable (prose without code" in coder[1]["prompt"]  # what was tried
    assert "mask the tail so any XBLOCK works" in coder[0]["prompt"]  # the planner's ideas
    prof = next(x for x in lines if x["role"] == "profiler")
    assert prof["outcome"] == "failed" and "HTTP 400" in prof["reason"] and "[redacted]" in prof["reason"]
    review = next(x for x in lines if x["role"] == "reviewer")
    assert "G1" in review["prompt"] and review["candidates"] == [cands[kernel["chosen"]]["hash"]]

    llm = report["llm"]
    assert llm["roles"]["coder"]["proposed"] == 2 and llm["roles"]["coder"]["unparsable"] == 2
    assert llm["roles"]["coder"]["rejected_at"]["G1"] == 1 and llm["roles"]["coder"]["rejected_at"]["G2"] == 1
    assert llm["roles"]["reviewer"]["chosen"] == 1 and llm["kernels_won"] == 1
    exchanges = len(lines)
    assert llm["input_tokens"] == 1000 * (exchanges - 1)  # the failed profiler request reported no usage
    assert llm["cost"] == pytest.approx((1000 * 3.0 + 500 * 15.0) * (exchanges - 1) / 1e6)
    assert llm["cost_per_kernel_won"] == pytest.approx(llm["cost"])
    md = (out / "report.md").read_text()
    assert "## LLM agents" in md and "| coder |" in md


def test_hybrid_by_default_and_the_budget_stops_requests_when_spent(kernelopt_bin, tmp_path):
    script = {"default": {"text": "no code here", "input_tokens": 1000, "output_tokens": 500}}
    with ScriptedServer(script) as server:
        # 1500 tokens per reply: the third reply spends the budget; nothing is sent after it.
        cfg = write_config(tmp_path, server.url, max_tokens=4000)
        r = run_optimize(kernelopt_bin, tmp_path, cfg, agents=())  # an endpoint is configured: hybrid
    assert r.returncode == 0, r.stderr
    assert len(server.requests) == 3
    out = tmp_path / "out"
    lines = [json.loads(x) for x in (out / "transcripts.jsonl").read_text().splitlines()]
    assert [x["outcome"] for x in lines[3:]] and all(x["outcome"] == "refused" for x in lines[3:])
    assert "budget spent: 4500 of 4000 tokens" in lines[3]["reason"]
    report = json.loads((out / "report.json").read_text())
    assert report["llm"]["budget"]["spent"] and report["llm"]["not_sent"] >= 1
    assert report["llm"]["input_tokens"] + report["llm"]["output_tokens"] == 4500
    assert report["agents"] == "hybrid" and report["llm"]["kernels_won"] == 0
    # The LLM gave nothing usable; the built-in coder's candidates (its launch configs and the GELU's
    # one-plus source rewrite) still competed and one was accepted.
    (kernel,) = report["kernels"]
    assert kernel["accepted"] and {c["origin"] for c in kernel["candidates"]} == {"config", "rewrite"}
    assert "rewrite" in kernel["strategies"] and "config" in kernel["strategies"]
    assert_key_absent(tmp_path, r.stdout, r.stderr)


def check(kernelopt_bin, url, provider="openai", stream=True, **env):
    e = dict(os.environ, KERNELOPT_LLM_ENDPOINT=url, KERNELOPT_LLM_MODEL="m1", KERNELOPT_LLM_PROVIDER=provider,
             KERNELOPT_LLM_STREAM="1" if stream else "0", KERNELOPT_LLM_API_KEY_ENV="KOPT_TEST_LLM_KEY",
             KOPT_TEST_LLM_KEY=KEY, KERNELOPT_CONFIG="", **env)
    t = time.monotonic()
    r = subprocess.run([kernelopt_bin, "llm", "check", "--json"], capture_output=True, text=True, env=e, timeout=60)
    assert KEY not in r.stdout + r.stderr
    return r, json.loads(r.stdout) if r.stdout.startswith("{") else None, time.monotonic() - t


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [True, False])
def test_llm_check_speaks_both_protocols(kernelopt_bin, provider, stream):
    with ScriptedServer({"default": {"text": "ok", "input_tokens": 12, "output_tokens": 1}}, expect_key=KEY) as s:
        r, j, _ = check(kernelopt_bin, s.url, provider, stream)
    assert r.returncode == 0 and j["ok"], r.stdout + r.stderr
    assert j["model"] == "m1" and j["input_tokens"] == 12 and j["output_tokens"] == 1
    req = s.requests[0]
    assert req["path"] == ("/v1/messages" if provider == "anthropic" else "/v1/chat/completions")
    assert req["body"]["stream"] is stream
    assert (req["headers"].get("x-api-key") if provider == "anthropic" else req["headers"]["authorization"]).endswith(KEY)


def test_retries_429_after_retry_after_and_500(kernelopt_bin):
    script = {"default": {"text": "ok"}, "rules": [
        {"match": "single word", "replies": [{"status": 429, "retry_after": 1}, {"status": 500}, {"text": "ok"}]}]}
    with ScriptedServer(script) as s:
        r, j, dt = check(kernelopt_bin, s.url, KERNELOPT_LLM_MAX_RETRIES="3")
    assert r.returncode == 0 and j["ok"] and j["attempts"] == 3 and len(s.requests) == 3
    assert dt >= 1.0  # the second attempt waited for Retry-After


def test_gives_up_after_max_retries(kernelopt_bin):
    with ScriptedServer({"default": {"status": 503}}) as s:
        r, j, _ = check(kernelopt_bin, s.url, KERNELOPT_LLM_MAX_RETRIES="2")
    assert r.returncode == 1 and not j["ok"] and "HTTP 503" in j["error"] and len(s.requests) == 3


@pytest.mark.parametrize("reply,stream,error", [
    ({"delay_s": 5}, True, "timed out after 1 s"),
    ({"oversize_bytes": 3_000_000}, False, "larger than 1048576 bytes"),
    ({"text": "a" * 400, "truncate": True}, True, "stream ended before the end"),
    ({"text": "a" * 400, "finish": "length"}, False, "hit the token limit"),
])
def test_failed_replies_are_reported_not_retried(kernelopt_bin, reply, stream, error):
    with ScriptedServer({"default": reply}) as s:
        r, j, dt = check(kernelopt_bin, s.url, stream=stream, KERNELOPT_LLM_TIMEOUT_S="1")
    assert r.returncode == 1 and not j["ok"] and error in j["error"], j
    assert len(s.requests) == 1 and dt < 4


CUT_JSON = '{"id": "c1", "choices": [{"index": 0, "message": {"role": "assistant", "content": "```python\\ndef k('
CUT_STREAM = 'data: {"choices": [{"delta": {"content": "ok"}}]}\n\ndata: {"choices": [{"del\n\ndata: [DONE]\n\n'


@pytest.mark.parametrize("reply,stream,error", [
    ({"raw_body": CUT_JSON}, False, "the endpoint's reply is not valid JSON (HTTP 200, 100 bytes): " + CUT_JSON),
    ({"raw_body": "<html><body>502 Bad Gateway</body></html>", "content_type": "text/html"}, True,
     "the endpoint's reply is not valid JSON (HTTP 200, 41 bytes): <html><body>502 Bad Gateway"),
    ({"raw_body": CUT_STREAM, "content_type": "text/event-stream"}, True,
     "the endpoint's reply has an event that is not valid JSON (HTTP 200, 91 bytes): data: {\"choices\""),
    ({"raw_body": '{"object": "chat.completion"}'}, False, "the endpoint's reply has no choices"),
])
def test_a_malformed_200_is_named_as_such(kernelopt_bin, reply, stream, error):
    with ScriptedServer({"default": reply}) as s:
        r, j, _ = check(kernelopt_bin, s.url, stream=stream)
    assert r.returncode == 1 and not j["ok"] and j["error"].startswith(error), j
    assert "reported an error" not in j["error"] and len(s.requests) == 1  # not the endpoint's error; not retried


def test_the_transcript_keeps_a_malformed_reply_as_received(kernelopt_bin, tmp_path):
    script = {"rules": [{"match": "# kernelopt profiler prompt", "replies": [{"raw_body": CUT_JSON}]},
                        {"match": "# kernelopt planner prompt", "replies": [
                            {"raw_body": CUT_STREAM, "content_type": "text/event-stream"}]}],
              "default": {"text": "no code here"}}
    with ScriptedServer(script, expect_key=KEY) as server:
        cfg = write_config(tmp_path, server.url)
        r = run_optimize(kernelopt_bin, tmp_path, cfg, "--max-cascades", "1")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in (tmp_path / "out" / "transcripts.jsonl").read_text().splitlines()]
    prof = next(x for x in lines if x["role"] == "profiler")
    plan = next(x for x in lines if x["role"] == "planner")
    assert prof["outcome"] == "failed" and prof["http_status"] == 200
    assert prof["reason"].startswith("the endpoint's reply is not valid JSON (HTTP 200, 100 bytes): " + CUT_JSON)
    assert prof["reply"] == CUT_JSON and prof["reply_malformed"] is True  # what came, not ""
    assert plan["outcome"] == "failed" and plan["reply"] == CUT_STREAM and plan["reply_malformed"] is True
    assert "has an event that is not valid JSON" in plan["reason"]
    coder = [x for x in lines if x["role"] == "coder"]
    assert coder and all(x["reply"] == "no code here" and x["reply_malformed"] is False for x in coder)
    assert_key_absent(tmp_path, r.stdout, r.stderr)


def test_unconfigured_agents_llm_names_the_fix(kernelopt_bin, tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith("KERNELOPT_LLM")}
    r = subprocess.run([kernelopt_bin, "optimize", str(BUNDLE), "--device", "cpu", "--agents", "llm", "--out",
                        str(tmp_path / "o"), "--db", str(tmp_path / "db")], capture_output=True, text=True, env=e,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "needs an LLM endpoint" in r.stderr and "KERNELOPT_LLM_ENDPOINT" in r.stderr


def _kernel_def(module: str, name: str) -> str:
    """The `def name(...)` text of one kernel declared in an Inductor module (up to its closing quotes)."""
    start = module.index(f"def {name}(")
    return module[start:module.index("'''", start)]


def test_end_to_end_failure_leaves_out_one_kernel_and_keeps_the_other(kernelopt_bin, tmp_path):
    """Two kernels, each off by 6e-5 relative (inside the 1e-4 tolerance alone, so each passes G1-G3),
    chained so their errors add up to 1.2e-4 in the model: the end-to-end gate fails with both, and the
    optimizer leaves one out and keeps the other instead of dropping both."""
    bundle = ROOT / "corpus" / "row_sum_long"
    module = (bundle / "module_0.py").read_text()
    k0, k1 = "triton_red_fused_sum_0", "triton_per_fused_sum_1"
    off0 = _kernel_def(module, k0).replace("tl.store(out_ptr0 + (x0), tmp2, xmask)",
                                           "tl.store(out_ptr0 + (x0), tmp2 * 1.00006, xmask)")
    off1 = _kernel_def(module, k1).replace("tl.store(out_ptr0 + (x0), tmp4, xmask)",
                                           "tl.store(out_ptr0 + (x0), tmp4 * 1.00006, xmask)")
    assert "1.00006" in off0 and "1.00006" in off1
    script = {"rules": [
        {"match": "# kernelopt planner prompt", "replies": [{"text": PLAN}]},
        {"match": f"def {k0}(", "replies": [{"text": fenced(off0)}]},
        {"match": f"def {k1}(", "replies": [{"text": fenced(off1)}]},
    ], "default": {"text": "no opinion"}}
    with ScriptedServer(script, expect_key=KEY) as server:
        cfg = write_config(tmp_path, server.url)
        env = dict(os.environ, KOPT_TEST_LLM_KEY=KEY)
        r = subprocess.run([kernelopt_bin, "optimize", str(bundle), "--device", "cpu", "--agents", "llm", "--config",
                            str(cfg), "--out", str(tmp_path / "out"), "--db", str(tmp_path / "results.db"),
                            "--seeds", "2"], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    assert f"again without {k1}" in r.stderr, r.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    kernels = {k["name"]: k for k in report["kernels"]}
    assert kernels[k0]["accepted"] and not kernels[k1]["accepted"], kernels
    assert "left out of the result" in kernels[k1]["note"] and "end-to-end" in kernels[k1]["note"]
    assert report["module"]["changed"] and report["module"]["end_to_end"]["status"] != "failed"
    stitched = (tmp_path / "out" / "module_0.py").read_text()
    assert stitched.count("* 1.00006") == 1 and "tmp2 * 1.00006" in stitched


def test_the_llm_fuses_a_region_as_one_unit(kernelopt_bin, tmp_path):
    """`--agents llm` on corpus/group_norm: besides its kernels, the region (statistics, then normalize) is sent to
    the region prompt; a reply that passes an internal buffer is unparsable, a wrong fusion fails G2, a right one
    passes G1-G3 and replaces both kernels."""
    from llm_scripts import REGION_CORRECT, REGION_INTERNAL, REGION_WRONG

    script = {"rules": [{"match": "# kernelopt region prompt", "replies": [
        {"text": fenced(REGION_INTERNAL)}, {"text": fenced(REGION_WRONG)}, {"text": fenced(REGION_CORRECT)}]}],
        "default": {"text": "no"}}
    with ScriptedServer(script, expect_key=KEY) as server:
        cfg = write_config(tmp_path, server.url)
        cfg.write_text(cfg.read_text().replace("coder_proposals = 4", "coder_proposals = 3"))
        env = dict(os.environ, KOPT_TEST_LLM_KEY=KEY)
        cmd = [kernelopt_bin, "optimize", str(ROOT / "corpus" / "group_norm"), "--device", "cpu", "--agents", "llm",
               "--config", str(cfg), "--out", str(tmp_path / "out"), "--db", str(tmp_path / "results.db"),
               "--seeds", "2"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    assert server.roles().count("region") == 3
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    fusion = report["regions"][0]["fusion"]
    assert any("llm (reply 1): the parameter buf0 names none of the region's inputs and outputs" in d
               for d in fusion["declined"]), fusion["declined"]
    outcomes = [(c["origin"], c["accepted"], [g["status"] for g in c["gates"]]) for c in fusion["candidates"]]
    assert outcomes == [("llm:region", False, ["passed", "failed"]),
                        ("llm:region", True, ["passed", "passed", "passed", "not_measured"])], outcomes
    assert fusion["chosen"] == "r2" and all(k["fused"] for k in report["kernels"])
    module = (tmp_path / "out" / "module_0.py").read_text()
    assert "triton_region_g0_r0.run(arg2_1, arg0_1, arg1_1, buf3, 32, 2048, stream=stream0)" in module
    assert "@triton_heuristics.reduction(" in module and "size_hints={'x': 32, 'r0_': 2048}," in module
    lines = [json.loads(x) for x in (tmp_path / "out" / "transcripts.jsonl").read_text().splitlines()]
    region = [x for x in lines if x["role"] == "region"]
    assert [x["outcome"] for x in region] == ["unparsable", "proposed", "proposed"]
    assert "buf0 (internal)" in region[0]["prompt"] and "triton_red_fused_native_group_norm_0" in region[0]["prompt"]
    assert region[0]["prompt_version"] == "region/v1"
