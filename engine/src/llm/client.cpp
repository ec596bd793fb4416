#include "llm/client.h"

#include <chrono>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "llm/curl_api.h"

namespace kopt::llm {

using Clock = std::chrono::steady_clock;

struct Client::Attempt {
  long status = 0;
  CURLcode code = CURLE_OK;
  std::string curl_error;
  std::string body;             // bounded by max_reply_bytes
  bool oversized = false;
  bool event_stream = false;
  std::optional<double> retry_after;
  std::unique_ptr<SseParser> sse;
};

namespace {

struct WriteCtx {
  Client::Attempt* a;
  int64_t limit;
  CURL* h;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<WriteCtx*>(user);
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string value = line.substr(colon + 1);
    if (name == "retry-after") ctx->a->retry_after = parse_retry_after(value, std::time(nullptr));
    if (name == "content-type") ctx->a->event_stream = value.find("text/event-stream") != std::string::npos;
  }
  return size * n;
}

}  // namespace

// Defined here because Attempt is private to Client.
static size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<WriteCtx*>(user);
  Client::Attempt& a = *ctx->a;
  size_t len = size * n;
  if (static_cast<int64_t>(a.body.size() + len) > ctx->limit) {
    a.oversized = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  a.body.append(data, len);
  if (a.sse) {
    long status = 0;
    curl_api().easy_getinfo(ctx->h, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200 && a.event_stream) a.sse->feed(std::string(data, len));
  }
  return len;
}

Client::Client(Config c) : c_(std::move(c)), slots_(std::max(1, std::min(c_.concurrency, 1024))),
                           rng_(std::random_device{}()) {
  curl_api();  // a missing libcurl is reported now, not at the first request
  key_ = c_.api_key();
}

std::string Client::scrub(std::string s) const {
  if (key_.empty()) return s;
  for (size_t p; (p = s.find(key_)) != std::string::npos;) s.replace(p, key_.size(), "[redacted]");
  return s;
}

Spent Client::spent() const {
  std::lock_guard lock(mu_);
  return spent_;
}

std::string Client::budget_spent() const {
  std::lock_guard lock(mu_);
  const Budget& b = c_.budget;
  int64_t tokens = spent_.input_tokens + spent_.output_tokens;
  if (b.max_tokens > 0 && tokens >= b.max_tokens)
    return fmt::format("budget spent: {} of {} tokens used", tokens, b.max_tokens);
  if (b.max_cost > 0 && spent_.cost >= b.max_cost)
    return fmt::format("budget spent: {:.4f} of {:.4f} cost used", spent_.cost, b.max_cost);
  return "";
}

Client::Attempt Client::attempt_once(const std::string& body, bool stream) {
  const CurlApi& curl = curl_api();
  Attempt a;
  if (stream) a.sse = std::make_unique<SseParser>(c_.provider);
  CURL* h = curl.easy_init();
  if (!h) {
    a.code = CURLE_FAILED_INIT;
    a.curl_error = "curl_easy_init failed";
    return a;
  }
  WriteCtx ctx{&a, c_.max_reply_bytes, h};
  char errbuf[CURL_ERROR_SIZE] = {0};
  struct curl_slist* headers = nullptr;
  headers = curl.slist_append(headers, "Content-Type: application/json");
  if (c_.provider == Provider::Anthropic) {
    headers = curl.slist_append(headers, "anthropic-version: 2023-06-01");
    if (!key_.empty()) headers = curl.slist_append(headers, ("x-api-key: " + key_).c_str());
  } else if (!key_.empty()) {
    headers = curl.slist_append(headers, ("Authorization: Bearer " + key_).c_str());
  }
  if (stream) headers = curl.slist_append(headers, "Accept: text/event-stream");
  std::string url = c_.url();
  curl.easy_setopt(h, CURLOPT_URL, url.c_str());
  curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl.easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl.easy_setopt(h, CURLOPT_WRITEDATA, &ctx);
  curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl.easy_setopt(h, CURLOPT_HEADERDATA, &ctx);
  curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(c_.timeout_s * 1000));
  curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(c_.connect_timeout_s * 1000));
  curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe in threads
  curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  // The key travels in a header: never let curl print a request (CURLOPT_VERBOSE stays off).
  curl.easy_setopt(h, CURLOPT_VERBOSE, 0L);
  a.code = curl.easy_perform(h);
  curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  a.curl_error = errbuf[0] ? errbuf : curl.easy_strerror(a.code);
  curl.slist_free_all(headers);
  curl.easy_cleanup(h);
  return a;
}

Reply Client::send(const std::vector<Message>& messages) {
  Reply r;
  auto t0 = Clock::now();
  auto done = [&]() -> Reply {
    r.latency_s = std::chrono::duration<double>(Clock::now() - t0).count();
    r.text = scrub(r.text), r.error = valid_utf8(scrub(r.error)), r.raw = scrub(r.raw);
    return r;
  };
  if (std::string why = budget_spent(); !why.empty()) {
    std::lock_guard lock(mu_);
    ++spent_.refused;
    r.error = why, r.refused_by_budget = r.not_sent = true;
    return done();
  }
  {
    std::lock_guard lock(mu_);
    if (no_reply_streak_ >= kGiveUpAfter) {
      ++spent_.refused;
      r.error = fmt::format("endpoint given up: {} requests in a row got no reply", no_reply_streak_);
      r.not_sent = true;
      return done();
    }
  }
  const std::string body = request_body(c_.provider, c_.model, messages, c_.max_reply_tokens, c_.temperature,
                                        c_.stream).dump();
  Attempt a;
  for (r.attempts = 1;; ++r.attempts) {
    slots_.acquire();
    a = attempt_once(body, c_.stream);
    slots_.release();
    bool connect_failed = a.code == CURLE_COULDNT_CONNECT || a.code == CURLE_COULDNT_RESOLVE_HOST ||
                          a.code == CURLE_SEND_ERROR;
    bool retry = (a.code == CURLE_OK && retryable_status(a.status)) || connect_failed;
    if (!retry || r.attempts > c_.max_retries) break;
    double unit;
    {
      std::lock_guard lock(mu_);
      unit = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
    }
    double wait = backoff_delay(r.attempts, c_.backoff_base_s, c_.backoff_cap_s, a.retry_after, unit);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  {
    std::lock_guard lock(mu_);
    spent_.requests += r.attempts;
    // Any HTTP answer other than a 5xx shows the endpoint is there (a 4xx is this request's fault).
    bool answered = a.status != 0 && a.status < 500;
    no_reply_streak_ = answered ? 0 : no_reply_streak_ + 1;
  }
  r.http_status = a.status;
  // Before anything quotes a part of the body: a key echoed across a cut would escape the scrub.
  const size_t received = a.body.size();
  a.body = scrub(std::move(a.body));
  Completion c;
  if (a.oversized) {
    r.error = fmt::format("reply larger than {} bytes (max_reply_bytes); dropped", c_.max_reply_bytes);
    return done();
  }
  if (a.code == CURLE_OPERATION_TIMEDOUT) {
    r.error = fmt::format("timed out after {:.0f} s (timeout_s)", c_.timeout_s);
    return done();
  }
  bool cut = a.code == CURLE_PARTIAL_FILE || a.code == CURLE_RECV_ERROR;
  if (a.code != CURLE_OK && !cut) {
    r.error = fmt::format("request failed: {}", a.curl_error);
    return done();
  }
  if (a.status != 200) {
    Completion e = parse_reply(c_.provider, a.body);
    r.error = fmt::format("HTTP {}: {}", a.status, (e.error.empty() ? a.body : e.error).substr(0, 300));
    if (retryable_status(a.status)) r.error += fmt::format(" (after {} attempts)", r.attempts);
    return done();
  }
  bool streamed = a.sse && a.event_stream;
  c = streamed ? a.sse->result() : parse_reply(c_.provider, a.body);
  if (cut) c.complete = false;
  // A whole answer labelled an event stream that holds no event at all (an HTML page, say).
  if (streamed && !cut && a.sse->events() == 0 && !a.body.empty() && c.malformed.empty())
    c.malformed = "is not a server-sent-event stream";
  r.text = c.text, r.model = c.model, r.finish = c.finish;
  r.truncated = c.truncated();
  // Tokens are spent even by a reply that is unusable: count them before judging it.
  r.tokens_estimated = !c.input_tokens || !c.output_tokens;
  int64_t prompt_chars = 0;
  for (const Message& m : messages) prompt_chars += static_cast<int64_t>(m.content.size());
  r.input_tokens = c.input_tokens.value_or((prompt_chars + 3) / 4);
  r.output_tokens = c.output_tokens.value_or(static_cast<int64_t>(c.text.size() + 3) / 4);
  r.cost = r.input_tokens * c_.budget.price_input_per_mtok / 1e6 + r.output_tokens * c_.budget.price_output_per_mtok / 1e6;
  {
    std::lock_guard lock(mu_);
    spent_.input_tokens += r.input_tokens, spent_.output_tokens += r.output_tokens, spent_.cost += r.cost;
  }
  if (!c.error.empty()) {
    r.error = "the endpoint reported an error: " + c.error.substr(0, 300);
  } else if (!c.malformed.empty()) {
    // Not "reported an error": the endpoint said 200 and sent something else. What it sent is kept.
    r.malformed = true;
    r.raw = utf8_prefix(valid_utf8(a.body.substr(0, kMaxRawReply + 4)), kMaxRawReply);
    std::string quote = utf8_prefix(r.raw, kMalformedQuote);
    for (char& ch : quote)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';  // one line in a log
    r.error = fmt::format("the endpoint's reply {} (HTTP 200, {} bytes): {}{}", c.malformed, received,
                          a.body.empty() ? "(empty body)" : quote, r.raw.size() > quote.size() ? "..." : "");
  } else if (r.truncated) r.error = c.complete ? fmt::format("truncated: the reply hit the token limit ({})", c.finish)
                                            : "truncated: the stream ended before the end of the message";
  else if (c.text.empty()) r.error = "the reply has no text";
  r.ok = r.error.empty();
  return done();
}

}  // namespace kopt::llm
