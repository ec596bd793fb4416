// The LLM agents' pure parts: both wire protocols (whole replies and SSE
// streams, truncation, errors), the retry arithmetic, the strict config
// reader, the prompt templates, the strict reply parsing and the tuner's
// config check on a real corpus kernel; and the client's retries on a refused
// connection; and, against the scripted endpoint (tests/python/llm_server.py,
// run as a child process), the concurrency limit, the budget, Retry-After and
// the key scrubbing. The optimizer's use of all this is tests/python/test_llm.py.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <curl/curl.h>

#include "agents/llm/common.h"
#include "agents/tuner/llm.h"
#include "artifact/bundle.h"
#include "llm/client.h"
#include "llm/config.h"
#include "llm/prompts.h"
#include "llm/session.h"
#include "llm/wire.h"
#include "util/error.h"
#include "verify/static/g1.h"

namespace fs = std::filesystem;
using namespace kopt;
using nlohmann::json;
using llm::Provider;

TEST(LlmWire, RequestBodiesPutTheSystemPromptWhereEachProtocolWantsIt) {
  std::vector<llm::Message> m = {{"system", "be brief"}, {"user", "hi"}};
  json o = llm::request_body(Provider::OpenAI, "gpt", m, 100, 0.2, true);
  EXPECT_EQ(o["messages"].size(), 2u);
  EXPECT_EQ(o["messages"][0]["role"], "system");
  EXPECT_TRUE(o["stream_options"]["include_usage"]);
  json a = llm::request_body(Provider::Anthropic, "claude", m, 100, 0.2, false);
  EXPECT_EQ(a["system"], "be brief");
  ASSERT_EQ(a["messages"].size(), 1u);
  EXPECT_EQ(a["messages"][0]["role"], "user");
  EXPECT_FALSE(a.contains("stream_options"));
}

TEST(LlmWire, WholeRepliesOfBothProtocols) {
  auto o = llm::parse_reply(Provider::OpenAI,
                            R"({"model":"m","choices":[{"message":{"content":"hey"},"finish_reason":"stop"}],
                                "usage":{"prompt_tokens":7,"completion_tokens":2}})");
  EXPECT_EQ(o.text, "hey");
  EXPECT_EQ(*o.input_tokens, 7);
  EXPECT_EQ(*o.output_tokens, 2);
  EXPECT_FALSE(o.truncated());
  auto a = llm::parse_reply(Provider::Anthropic,
                            R"({"model":"c","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
                                "stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":9}})");
  EXPECT_EQ(a.text, "ab");
  EXPECT_TRUE(a.truncated());  // cut by the token limit
  EXPECT_EQ(llm::parse_reply(Provider::OpenAI, R"({"error":{"message":"nope"}})").error, "nope");
  EXPECT_FALSE(llm::parse_reply(Provider::OpenAI, "<html>").malformed.empty());
  EXPECT_FALSE(llm::parse_reply(Provider::OpenAI, R"({"choices":[]})").malformed.empty());
}

TEST(LlmWire, MalformedRepliesAreNotErrorsTheEndpointReported) {
  auto cut = llm::parse_reply(Provider::OpenAI, R"({"choices": [{"message": {"content": "hal)");
  EXPECT_EQ(cut.malformed, "is not valid JSON");
  EXPECT_EQ(cut.error, "");
  EXPECT_TRUE(cut.truncated());  // never complete: nothing of it is used
  EXPECT_EQ(llm::parse_reply(Provider::OpenAI, "").malformed, "is not valid JSON");
  EXPECT_EQ(llm::parse_reply(Provider::OpenAI, "[1, 2]").malformed, "is not a JSON object");
  EXPECT_EQ(llm::parse_reply(Provider::OpenAI, R"({"choices": []})").malformed, "has no choices");
  EXPECT_EQ(llm::parse_reply(Provider::Anthropic, R"({"content": "x"})").malformed, "has no content list");
  auto reported = llm::parse_reply(Provider::OpenAI, R"({"error": {"message": "overloaded"}})");
  EXPECT_EQ(reported.error, "overloaded");
  EXPECT_EQ(reported.malformed, "");
  // A stream: a data event that is not JSON spoils it, though it ended properly.
  llm::SseParser p(Provider::OpenAI);
  p.feed("data: {\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\n: keep-alive\n\ndata: {\"choices\":[{\"del\n\n");
  p.feed("data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: 7\n\ndata: [DONE]\n\n");
  EXPECT_EQ(p.result().malformed, "has an event that is not valid JSON");  // the first one is named
  EXPECT_EQ(p.events(), 5);
  EXPECT_FALSE(p.result().truncated());
  llm::SseParser html(Provider::Anthropic);
  html.feed("<html>\n<body>Bad gateway</body>\n</html>\n");
  EXPECT_EQ(html.events(), 0);
  EXPECT_EQ(html.result().malformed, "");  // the client tells a body without events (it saw the whole of it)
}

TEST(LlmWire, ValidUtf8AndPrefixes) {
  EXPECT_EQ(llm::valid_utf8("plain"), "plain");
  EXPECT_EQ(llm::valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  const std::string bad = "\xEF\xBF\xBD";
  EXPECT_EQ(llm::valid_utf8("a\xFF" "b"), "a" + bad + "b");
  EXPECT_EQ(llm::valid_utf8("a\xC3"), "a" + bad);                    // a character cut at the end
  EXPECT_EQ(llm::valid_utf8("\xC0\xAF"), bad + bad);                // overlong
  EXPECT_EQ(llm::valid_utf8("\xED\xA0\x80"), bad + bad + bad);       // a surrogate
  EXPECT_EQ(llm::valid_utf8("\xF4\x90\x80\x80"), bad + bad + bad + bad);  // above U+10FFFF
  EXPECT_EQ(llm::utf8_prefix("a\xC3\xA9z", 2), "a");  // not through the character
  EXPECT_EQ(llm::utf8_prefix("a\xC3\xA9z", 3), "a\xC3\xA9");
  EXPECT_EQ(llm::utf8_prefix("abc", 10), "abc");
}

TEST(LlmWire, OpenAiStreamCompleteOnlyWithDone) {
  llm::SseParser p(Provider::OpenAI);
  p.feed("data: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\n: keep-alive\n\nda");
  p.feed("ta: {\"choices\":[{\"delta\":{\"content\":\"llo\"},\"finish_reason\":\"stop\"}]}\r\n\r\n");
  EXPECT_EQ(p.result().text, "hello");
  EXPECT_TRUE(p.result().truncated());  // no [DONE] yet: the stream may have been cut
  p.feed("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n");
  EXPECT_FALSE(p.result().truncated());
  EXPECT_EQ(*p.result().input_tokens, 5);
  EXPECT_EQ(p.result().model, "m");
}

TEST(LlmWire, AnthropicStreamEvents) {
  llm::SseParser p(Provider::Anthropic);
  p.feed("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"c\",\"usage\":"
         "{\"input_tokens\":11,\"output_tokens\":1}}}\n\n");
  p.feed("data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n");
  EXPECT_TRUE(p.result().truncated());
  p.feed("data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n");
  p.feed("data: {\"type\":\"message_stop\"}\n\n");
  EXPECT_EQ(p.result().text, "ok");
  EXPECT_FALSE(p.result().truncated());
  EXPECT_EQ(*p.result().input_tokens, 11);
  EXPECT_EQ(*p.result().output_tokens, 4);
  llm::SseParser e(Provider::Anthropic);
  e.feed("data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
  EXPECT_EQ(e.result().error, "Overloaded");
}

TEST(LlmRetry, RetryAfterAndBackoff) {
  EXPECT_EQ(*llm::parse_retry_after(" 3 ", 0), 3.0);
  // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
  EXPECT_EQ(*llm::parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7.0);
  EXPECT_FALSE(llm::parse_retry_after("soon", 0));
  EXPECT_FALSE(llm::parse_retry_after("", 0));
  EXPECT_EQ(llm::backoff_delay(1, 1, 60, std::nullopt, 0.999), 0.999);
  EXPECT_NEAR(llm::backoff_delay(4, 1, 60, std::nullopt, 0.5), 4.0, 1e-9);  // half of 2^3
  EXPECT_NEAR(llm::backoff_delay(20, 1, 60, std::nullopt, 0.5), 30.0, 1e-9);  // capped at 60
  EXPECT_EQ(llm::backoff_delay(1, 1, 60, 5.0, 0.0), 5.0);     // never before Retry-After
  EXPECT_EQ(llm::backoff_delay(1, 1, 60, 3600.0, 0.0), 60.0);  // a huge Retry-After is capped
  EXPECT_TRUE(llm::retryable_status(429));
  EXPECT_TRUE(llm::retryable_status(503));
  EXPECT_FALSE(llm::retryable_status(400));
  EXPECT_FALSE(llm::retryable_status(401));
}

TEST(LlmConfig, ReadsTheFileStrictly) {
  llm::Config c = llm::parse_config(R"(
[llm]
provider = "anthropic"
endpoint = "https://api.example.com/v1/"
model = "m"
api_key_env = "MY_KEY"
concurrency = 2
[llm.budget]
max_tokens = 1000
price_output_per_mtok = 15
)", "t.toml");
  EXPECT_EQ(c.provider, Provider::Anthropic);
  EXPECT_EQ(c.url(), "https://api.example.com/v1/messages");
  EXPECT_EQ(c.concurrency, 2);
  EXPECT_EQ(c.budget.max_tokens, 1000);
  EXPECT_EQ(c.budget.price_output_per_mtok, 15.0);
  auto error = [](const std::string& text) {
    try {
      llm::parse_config(text, "t.toml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("[llm]\nendpoitn = \"x\"\n").find("unknown key llm.endpoitn"), std::string::npos);
  EXPECT_NE(error("[llm]\nconcurrency = \"4\"\n").find("llm.concurrency must be an integer"), std::string::npos);
  EXPECT_NE(error("[llm]\napi_key = \"sk-1\"\n").find("never put a key in a file"), std::string::npos);
  EXPECT_NE(error("[llm]\nprovider = \"gemini\"\n").find("use openai"), std::string::npos);
  EXPECT_NE(error("[llm\n").find("t.toml:"), std::string::npos);
}

TEST(LlmConfig, TheExampleFileIsValid) {
  std::ifstream in(std::string(KOPT_SOURCE_DIR) + "/examples/kernelopt.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  llm::Config c = llm::parse_config(ss.str(), "examples/kernelopt.toml");
  EXPECT_TRUE(c.configured());
  EXPECT_EQ(c.url(), "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(c.budget.max_tokens, 500000);
}

TEST(LlmConfig, EnvironmentOverridesAndTheKeyVariable) {
  llm::Config c = llm::parse_config("[llm]\nendpoint = \"http://a/v1\"\nmodel = \"m\"\n", "t.toml");
  setenv("KERNELOPT_LLM_MODEL", "other", 1);
  setenv("KERNELOPT_LLM_BUDGET_TOKENS", "77", 1);
  llm::apply_env(c);
  unsetenv("KERNELOPT_LLM_MODEL");
  unsetenv("KERNELOPT_LLM_BUDGET_TOKENS");
  EXPECT_EQ(c.model, "other");
  EXPECT_EQ(c.budget.max_tokens, 77);
  EXPECT_EQ(c.url(), "http://a/v1/chat/completions");
  c.api_key_env = "KOPT_UNIT_TEST_UNSET_KEY";
  unsetenv("KOPT_UNIT_TEST_UNSET_KEY");
  EXPECT_THROW(c.api_key(), UserError);
  setenv("KOPT_UNIT_TEST_UNSET_KEY", "sk-abc", 1);
  EXPECT_EQ(c.api_key(), "sk-abc");
  unsetenv("KOPT_UNIT_TEST_UNSET_KEY");
}

TEST(LlmClient, RetriesARefusedConnectionThenFails) {
  llm::Config c;
  c.endpoint = "http://127.0.0.1:9/v1";  // discard port: nothing listens
  c.model = "m";
  c.max_retries = 2;
  c.backoff_base_s = 0.01;
  c.budget.max_tokens = 10;
  llm::Client client(c);
  llm::Reply r = client.send({{"user", "hi"}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error.find("request failed"), std::string::npos);
  EXPECT_EQ(client.spent().requests, 3);
  EXPECT_EQ(client.spent().input_tokens, 0);  // nothing answered, nothing spent
  EXPECT_EQ(client.budget_spent(), "");
  // Two more requests without a reply, and the endpoint is given up: the next is not sent.
  EXPECT_FALSE(client.send({{"user", "hi"}}).not_sent);
  EXPECT_FALSE(client.send({{"user", "hi"}}).not_sent);
  llm::Reply given_up = client.send({{"user", "hi"}});
  EXPECT_TRUE(given_up.not_sent);
  EXPECT_FALSE(given_up.refused_by_budget);
  EXPECT_EQ(given_up.attempts, 0);
  EXPECT_NE(given_up.error.find("endpoint given up"), std::string::npos);
  EXPECT_EQ(client.spent().requests, 9);
}

TEST(LlmPrompts, EveryRoleHasAVersionedTemplate) {
  for (const char* role : {"system", "profiler", "planner", "coder", "reviewer", "tuner"}) {
    llm::Prompt p = llm::prompt(role);
    EXPECT_EQ(p.version, std::string(role) + "/v1");
  }
  EXPECT_EQ(llm::render("a {{x}} b {{y}}", {{"x", "1"}, {"y", "{{x}}"}}), "a 1 b {{x}}");
  EXPECT_THROW(llm::render("a {{missing}}", {}), std::logic_error);
}

TEST(LlmParse, OneCodeBlockStrictly) {
  using agents::llm_support::one_code_block;
  EXPECT_EQ(*one_code_block("Here:\n```python\nx = 1\n```\nDone.").value, "x = 1\n");
  EXPECT_NE(one_code_block("Just prose.").reason.find("prose without code"), std::string::npos);
  EXPECT_NE(one_code_block("```python\nx = 1\n").reason.find("truncated"), std::string::npos);
  EXPECT_NE(one_code_block("```\na\n```\n```\nb\n```\n").reason.find("2 code blocks"), std::string::npos);
  EXPECT_NE(one_code_block("```\n\n```\n").reason.find("empty"), std::string::npos);
  auto j = agents::llm_support::one_json_object("```json\n{\"a\": 1}\n```");
  EXPECT_EQ((*j.value)["a"], 1);
  EXPECT_TRUE(agents::llm_support::one_json_object("{\"a\": [1]}").value);
  EXPECT_NE(agents::llm_support::one_json_object("```json\n{\"a\": \n```").reason.find("does not parse"),
            std::string::npos);
  EXPECT_NE(agents::llm_support::one_json_object("```json\n[1]\n```").reason.find("not an object"), std::string::npos);
}

TEST(LlmParse, EntryFunctionAndCandidateSourceOnACorpusKernel) {
  auto b = ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "corpus" / "gelu_scale").string());
  agents::KernelProfile k;
  k.kernel = &b->graphs[0]->kernels.at(0);
  const std::string def = "def " + k.kernel->entry + "(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
                          "    x = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"
                          "    m = x < xnumel\n"
                          "    tl.store(out_ptr0 + x, tl.load(in_ptr0 + x, m) + tl.load(in_ptr1 + x % 256, m), m)\n";
  auto src = agents::llm_support::candidate_source(k, "```python\nimport triton\n@triton.jit\n" + def + "```\n");
  ASSERT_TRUE(src.value) << src.reason;
  EXPECT_NE(src.value->find("@triton_heuristics.pointwise("), std::string::npos);  // the launch stays Inductor's
  EXPECT_NE(src.value->find(def), std::string::npos);
  EXPECT_TRUE(verify::run_g1(*k.kernel, *src.value).passed);
  auto two = agents::llm_support::candidate_source(k, "```python\n@triton.jit\n" + def + "@triton.jit\ndef h():\n  pass\n```");
  EXPECT_NE(two.reason.find("several kernels"), std::string::npos);
  auto renamed = agents::llm_support::candidate_source(k, "```python\ndef kernel(a):\n  pass\n```");
  EXPECT_NE(renamed.reason.find("no top-level function " + k.kernel->entry), std::string::npos);
  std::string facts = agents::llm_support::kernel_facts(k);
  EXPECT_NE(facts.find("aten.gelu"), std::string::npos);
  EXPECT_NE(facts.find("in_ptr0: *fp32"), std::string::npos);
}

TEST(LlmTuner, ChecksSuggestedConfigs) {
  auto b = ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "corpus" / "gelu_scale").string());
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto c = agents::check_suggested_config(k, json(), {{"XBLOCK", 256}, {"num_warps", 8}}, &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ((*c)["num_stages"], 1);
  EXPECT_FALSE(agents::check_suggested_config(k, json(), {{"XBLOCK", 100}}, &why));  // not a power of two
  EXPECT_FALSE(agents::check_suggested_config(k, json(), {{"num_warps", 4}}, &why));  // XBLOCK unset
  EXPECT_NE(why.find("does not set XBLOCK"), std::string::npos);
  EXPECT_FALSE(agents::check_suggested_config(k, json(), {{"XBLOCK", 64}, {"RBLOCK", 8}}, &why));
  EXPECT_TRUE(agents::check_suggested_config(k, {{"XBLOCK", 64}, {"num_warps", 2}}, {{"num_warps", 4}}, &why));
}

// The client against the scripted endpoint (tests/python/llm_server.py) in a child process.
namespace {

class ScriptedServer {
 public:
  explicit ScriptedServer(const json& script) {
    path_ = (fs::temp_directory_path() / ("kopt_llm_script_" + std::to_string(getpid()) + ".json")).string();
    std::ofstream(path_) << script.dump();
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fd[1], 1);
      close(fd[0]);
      std::string server = std::string(KOPT_SOURCE_DIR) + "/tests/python/llm_server.py";
      execlp("python3", "python3", server.c_str(), path_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fd[1]);
    // The server prints its base URL once it listens.
    char c;
    while (read(fd[0], &c, 1) == 1 && c != '\n') url_ += c;
    close(fd[0]);
  }
  ~ScriptedServer() {
    if (pid_ > 0) kill(pid_, SIGTERM), waitpid(pid_, nullptr, 0);
    fs::remove(path_);
  }
  const std::string& url() const { return url_; }
  json stats() const {
    std::string body;
    CURL* h = curl_easy_init();
    std::string u = url_.substr(0, url_.rfind("/v1")) + "/stats";
    curl_easy_setopt(h, CURLOPT_URL, u.c_str());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, +[](char* d, size_t s, size_t n, void* b) {
      static_cast<std::string*>(b)->append(d, s * n);
      return s * n;
    });
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_perform(h);
    curl_easy_cleanup(h);
    return json::parse(body, nullptr, false);
  }

 private:
  std::string path_, url_;
  pid_t pid_ = -1;
};

llm::Config scripted_config(const std::string& url) {
  llm::Config c;
  c.endpoint = url;
  c.model = "m";
  c.backoff_base_s = 0.01;
  return c;
}

}  // namespace

TEST(LlmClient, ConcurrencyLimitHoldsAcrossThreads) {
  ScriptedServer s(json::parse(R"({"default": {"text": "ok", "delay_s": 0.3}})"));
  ASSERT_FALSE(s.url().empty());
  llm::Config c = scripted_config(s.url());
  c.concurrency = 2;
  llm::Client client(c);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&] { ok += client.send({{"user", "hi"}}).ok; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 6);
  json st = s.stats();
  EXPECT_EQ(st["requests"], 6);
  EXPECT_EQ(st["max_in_flight"], 2);
}

TEST(LlmClient, BudgetInTokensAndMoneyStopsNewRequests) {
  ScriptedServer s(json::parse(R"({"default": {"text": "ok", "input_tokens": 1000, "output_tokens": 500}})"));
  llm::Config c = scripted_config(s.url());
  c.budget.max_tokens = 0;
  c.budget.max_cost = 0.02;  // 0.0105 a reply: the second reply spends it
  c.budget.price_input_per_mtok = 3, c.budget.price_output_per_mtok = 15;
  llm::Client client(c);
  EXPECT_TRUE(client.send({{"user", "1"}}).ok);
  EXPECT_TRUE(client.send({{"user", "2"}}).ok);
  llm::Reply third = client.send({{"user", "3"}});
  EXPECT_FALSE(third.ok);
  EXPECT_TRUE(third.refused_by_budget);
  EXPECT_NE(third.error.find("budget spent: 0.0210 of 0.0200"), std::string::npos);
  EXPECT_EQ(s.stats()["requests"], 2);
  EXPECT_EQ(client.spent().input_tokens, 2000);
  EXPECT_EQ(client.spent().refused, 1);
  EXPECT_NEAR(client.spent().cost, 0.021, 1e-12);
}

TEST(LlmClient, RetriesHonourRetryAfterAndScrubTheKey) {
  ScriptedServer s(json::parse(R"({"rules": [{"match": "hi", "replies": [
      {"status": 429, "retry_after": 1}, {"status": 401, "echo_key": true}]}]})"));
  llm::Config c = scripted_config(s.url());
  c.api_key_env = "KOPT_UNIT_TEST_KEY";
  setenv("KOPT_UNIT_TEST_KEY", "sk-unit-test-secret-91", 1);
  llm::Client client(c);
  unsetenv("KOPT_UNIT_TEST_KEY");
  auto t0 = std::chrono::steady_clock::now();
  llm::Reply r = client.send({{"user", "hi"}});
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 1.0);  // Retry-After: 1, though the jittered backoff would have been ~10 ms
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.http_status, 401);  // not retried
  EXPECT_EQ(r.error.find("sk-unit-test-secret-91"), std::string::npos);
  EXPECT_NE(r.error.find("[redacted]"), std::string::npos);
}

TEST(LlmClient, AMalformedReplyIsNamedAndKeptAsReceived) {
  const std::string stream_body =
      "data: {\"choices\": [{\"delta\": {\"content\": \"he\"}}]}\n\ndata: {\"choices\": [{\"del\n\ndata: [DONE]\n\n";
  std::string big;
  for (int i = 0; i < 40000; ++i) big += "\xC3\xA9";  // 80000 bytes of two-byte characters
  auto rule = [](const char* match, json reply) { return json{{"match", match}, {"replies", json::array({reply})}}; };
  json script = {{"rules", json::array()}};
  script["rules"].push_back(rule("whole", {{"raw_body", "{\"choices\": [{\"message\": {\"content\": \"half\n"
                                                        "sk-unit-test-secret-91"}}));
  script["rules"].push_back(rule("stream", {{"raw_body", stream_body}, {"content_type", "text/event-stream"}}));
  script["rules"].push_back(
      rule("html", {{"raw_body", "<html>Bad gateway</html>\n"}, {"content_type", "text/event-stream"}}));
  script["rules"].push_back(rule("big", {{"raw_body", big}}));
  ScriptedServer s(script);
  ASSERT_FALSE(s.url().empty());
  llm::Config c = scripted_config(s.url());
  c.api_key_env = "KOPT_UNIT_TEST_KEY";
  setenv("KOPT_UNIT_TEST_KEY", "sk-unit-test-secret-91", 1);
  llm::Client client(c);
  unsetenv("KOPT_UNIT_TEST_KEY");

  // A 200 whose body is cut JSON (streaming was asked for; the server answered whole).
  llm::Reply r = client.send({{"user", "whole"}});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.malformed);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.attempts, 1);  // not retried
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(r.error.find("reported an error"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.rfind("the endpoint's reply is not valid JSON (HTTP 200, 65 bytes): "
                          "{\"choices\": [{\"message\": {\"content\": \"half [redacted]", 0), 0u) << r.error;
  EXPECT_EQ(r.raw, "{\"choices\": [{\"message\": {\"content\": \"half\n[redacted]");  // the key scrubbed

  r = client.send({{"user", "stream"}});
  EXPECT_TRUE(r.malformed);
  EXPECT_EQ(r.raw, stream_body);
  EXPECT_NE(r.error.find("the endpoint's reply has an event that is not valid JSON"), std::string::npos) << r.error;

  r = client.send({{"user", "html"}});
  EXPECT_TRUE(r.malformed);
  EXPECT_NE(r.error.find("is not a server-sent-event stream (HTTP 200, 25 bytes): <html>Bad gateway</html>"),
            std::string::npos) << r.error;

  r = client.send({{"user", "big"}});
  EXPECT_TRUE(r.malformed);
  EXPECT_EQ(r.raw.size(), llm::kMaxRawReply);  // the first 64 KiB, whole characters
  EXPECT_EQ(r.raw, big.substr(0, llm::kMaxRawReply));
  EXPECT_NE(r.error.find("(HTTP 200, 80000 bytes): \xC3\xA9"), std::string::npos);
  EXPECT_EQ(r.error.substr(r.error.size() - 5), "\xC3\xA9...");  // a quote of the start, cut
  EXPECT_EQ(s.stats()["requests"], 4);
}

TEST(LlmSession, TheTranscriptKeepsAMalformedReplyAsReceived) {
  const std::string body = "{\"id\": \"x\", \"choices\": [{\"message\": {\"content\": \"```python\\ndef k(";
  ScriptedServer s(json{{"default", {{"raw_body", body}}}});
  ASSERT_FALSE(s.url().empty());
  llm::Session session(scripted_config(s.url()));
  auto [i, r] = session.ask("system", "k0", {});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.malformed);
  json line = llm::exchange_json(session.exchanges().at(i));
  EXPECT_EQ(line["outcome"], "failed");
  EXPECT_EQ(line["reply"], body);
  EXPECT_EQ(line["reply_malformed"], true);
  EXPECT_EQ(line["http_status"], 200);
  EXPECT_EQ(line["reason"].get<std::string>().rfind("the endpoint's reply is not valid JSON", 0), 0u) << line;
  EXPECT_EQ(json::parse(session.jsonl())["reply"], body);  // the file's line, as written
}
