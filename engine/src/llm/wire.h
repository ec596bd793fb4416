// The two wire protocols the client speaks, as pure functions (no I/O, so the
// unit tests cover every reply shape): OpenAI-compatible chat completions
// (hosted APIs, vLLM, llama.cpp server, Ollama, SGLang) and the Anthropic
// Messages API — request bodies, whole replies, and server-sent-event streams —
// plus the retry arithmetic (Retry-After, backoff with jitter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::llm {

enum class Provider { OpenAI, Anthropic };

// "openai" | "anthropic"; nullopt for anything else.
std::optional<Provider> provider_from_name(const std::string& name);
std::string provider_name(Provider p);

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
};

// What one reply said, however it arrived.
struct Completion {
  std::string text;
  std::string model;           // the model the server says answered
  std::string finish;          // stop | length | max_tokens | end_turn | ... ("" when never said)
  bool complete = false;       // the protocol's end-of-message was seen (streams)
  std::optional<int64_t> input_tokens, output_tokens;
  std::string error;           // a protocol-level error ({"error": ...} body or event)
  // Why the body is no reply of the protocol, though the endpoint reported no error: "is not valid
  // JSON", "is not a JSON object", "has no choices", "has no content list", "has an event that is
  // not valid JSON", ... ("" for a well-formed reply).
  std::string malformed;
  // The reply was cut short: by the token limit, or a stream that ended before its end.
  bool truncated() const;
};

// The JSON body of one request. The system message goes where each protocol wants it.
nlohmann::json request_body(Provider p, const std::string& model, const std::vector<Message>& messages,
                            int64_t max_tokens, double temperature, bool stream);

// A whole (non-streamed) reply body. An {"error": ...} body gives a Completion with `error` set, a
// body that is not a reply of the protocol one with `malformed` set.
Completion parse_reply(Provider p, const std::string& body);

// Incremental parser of a server-sent-event stream: feed bytes as they arrive.
class SseParser {
 public:
  explicit SseParser(Provider p) : p_(p) {}
  void feed(const std::string& bytes);
  // After the connection closed: the reply so far (complete only if the end event was seen).
  const Completion& result() const { return c_; }
  // The `data:` events seen so far (none in a body that is no event stream at all).
  int events() const { return events_; }

 private:
  void event(const std::string& data);
  Provider p_;
  std::string buf_;
  Completion c_;
  int events_ = 0;
};

// Seconds to wait from a Retry-After header value (delta-seconds or an HTTP date relative to
// `now_epoch_s`); nullopt when absent or unreadable.
std::optional<double> parse_retry_after(const std::string& value, int64_t now_epoch_s);

// Delay before retry number `attempt` (1-based): full jitter over base*2^(attempt-1), capped,
// and never less than the server's Retry-After. `unit` is a random number in [0, 1).
double backoff_delay(int attempt, double base_s, double cap_s, std::optional<double> retry_after_s, double unit);

// Whether an HTTP status is worth retrying (429 and 5xx).
bool retryable_status(long status);

// `s` as valid UTF-8: each byte that is not part of a well-formed sequence becomes U+FFFD (what a
// server sent, or a cut through a character, must not make a JSON dump of the transcript throw).
std::string valid_utf8(const std::string& s);

// At most the first `max_bytes` of `s` (valid UTF-8), cut at a character boundary.
std::string utf8_prefix(const std::string& s, size_t max_bytes);

}  // namespace kopt::llm
