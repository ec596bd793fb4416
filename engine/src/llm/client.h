// The HTTP client of the LLM agents (libcurl): one chat request in, one reply
// out, whatever went wrong in between. It retries 429 and 5xx with exponential
// backoff and full jitter (never sooner than the server's Retry-After), limits
// the requests in flight, counts tokens from the replies, and refuses new
// requests once the run's token or money budget is spent. Timeouts, oversized
// and truncated replies fail the request without a retry: the same request
// would most likely fail the same way, and the run must go on. After
// kGiveUpAfter requests in a row got no HTTP answer (refused connections,
// timeouts before any header, 5xx to the last retry), the endpoint is given up for the run:
// later requests fail at once instead of each waiting out its retries.
//
// A 200 whose body is no reply of the protocol (not valid JSON, no choices, an
// event stream with an event that is not JSON, or no events at all) is a
// failure of its own, `malformed`, not retried: its error quotes the start of
// the body, and `raw` keeps what was received for the transcript.
//
// The API key goes into one request header and nowhere else; any echo of it in
// a reply or error is replaced by "[redacted]" before the reply leaves here.
#pragma once

#include <memory>
#include <mutex>
#include <random>
#include <semaphore>
#include <string>
#include <vector>

#include "llm/config.h"
#include "llm/wire.h"

namespace kopt::llm {

struct Reply {
  bool ok = false;               // a complete reply with text arrived
  std::string text;              // the assistant's text (possibly partial when truncated)
  std::string model;
  std::string finish;
  std::string error;             // why not ok: "HTTP 500: ...", "timed out after 5 s", "budget spent: ..."
  bool truncated = false;        // cut short by the token limit or a stream that ended early
  bool malformed = false;        // HTTP 200, but the body is no reply of the protocol
  std::string raw;               // when malformed: the body as received (at most kMaxRawReply bytes)
  bool not_sent = false;         // refused before sending: budget spent, or the endpoint given up
  bool refused_by_budget = false;  // not sent because the budget was spent
  long http_status = 0;
  int attempts = 0;
  double latency_s = 0;          // all attempts and waits together
  int64_t input_tokens = 0, output_tokens = 0;
  bool tokens_estimated = false; // the server reported no usage: about 4 characters per token
  double cost = 0;
};

inline constexpr int kGiveUpAfter = 3;
// How much of a malformed body Reply::raw keeps (the transcript's `reply`), and its error quotes.
inline constexpr size_t kMaxRawReply = 64 * 1024;
inline constexpr size_t kMalformedQuote = 200;

struct Spent {
  int64_t requests = 0, refused = 0, input_tokens = 0, output_tokens = 0;
  double cost = 0;
};

class Client {
 public:
  explicit Client(Config c);
  const Config& config() const { return c_; }
  // Thread-safe; never throws for anything the endpoint does.
  Reply send(const std::vector<Message>& messages);
  Spent spent() const;
  // Why a new request would be refused now ("" while the budget lasts).
  std::string budget_spent() const;

  struct Attempt;  // one HTTP exchange (client.cpp)

 private:
  Attempt attempt_once(const std::string& body, bool stream);
  std::string scrub(std::string s) const;

  Config c_;
  std::string key_;
  std::counting_semaphore<1024> slots_;
  mutable std::mutex mu_;
  Spent spent_;
  int no_reply_streak_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace kopt::llm
