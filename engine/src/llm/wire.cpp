#include "llm/wire.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace kopt::llm {

using nlohmann::json;

std::optional<Provider> provider_from_name(const std::string& name) {
  if (name == "openai") return Provider::OpenAI;
  if (name == "anthropic") return Provider::Anthropic;
  return std::nullopt;
}

std::string provider_name(Provider p) { return p == Provider::OpenAI ? "openai" : "anthropic"; }

bool Completion::truncated() const {
  return !complete || finish == "length" || finish == "max_tokens";
}

json request_body(Provider p, const std::string& model, const std::vector<Message>& messages, int64_t max_tokens,
                  double temperature, bool stream) {
  json body = {{"model", model}, {"max_tokens", max_tokens}, {"temperature", temperature}, {"stream", stream}};
  json msgs = json::array();
  std::string system;
  for (const Message& m : messages) {
    // Anthropic takes the system prompt as a top-level field, not as a message.
    if (p == Provider::Anthropic && m.role == "system") system += (system.empty() ? "" : "\n\n") + m.content;
    else msgs.push_back({{"role", m.role}, {"content", m.content}});
  }
  body["messages"] = msgs;
  if (!system.empty()) body["system"] = system;
  // OpenAI-compatible servers report usage in a stream only when asked.
  if (p == Provider::OpenAI && stream) body["stream_options"] = {{"include_usage", true}};
  return body;
}

namespace {

std::optional<int64_t> int_at(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number_integer()) return j[key].get<int64_t>();
  return std::nullopt;
}

std::string error_text(const json& j) {
  const json& e = j["error"];
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  return e.dump().substr(0, 300);
}

}  // namespace

Completion parse_reply(Provider p, const std::string& body) {
  Completion c;
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    c.malformed = j.is_discarded() ? "is not valid JSON" : "is not a JSON object";
    return c;
  }
  if (j.contains("error") && !j["error"].is_null()) {
    c.error = error_text(j);
    return c;
  }
  c.model = j.value("model", "");
  if (p == Provider::OpenAI) {
    const json& choices = j.value("choices", json::array());
    if (!choices.is_array() || choices.empty() || !choices[0].is_object()) {
      c.malformed = "has no choices";
      return c;
    }
    const json& msg = choices[0].value("message", json::object());
    if (msg.is_object() && msg.contains("content") && msg["content"].is_string()) c.text = msg["content"];
    if (choices[0].contains("finish_reason") && choices[0]["finish_reason"].is_string())
      c.finish = choices[0]["finish_reason"];
    const json& u = j.value("usage", json::object());
    c.input_tokens = int_at(u, "prompt_tokens"), c.output_tokens = int_at(u, "completion_tokens");
  } else {
    const json& content = j.value("content", json::array());
    if (!content.is_array()) {
      c.malformed = "has no content list";
      return c;
    }
    for (const json& b : content)
      if (b.is_object() && b.value("type", "") == "text" && b.contains("text") && b["text"].is_string())
        c.text += b["text"].get<std::string>();
    if (j.contains("stop_reason") && j["stop_reason"].is_string()) c.finish = j["stop_reason"];
    const json& u = j.value("usage", json::object());
    c.input_tokens = int_at(u, "input_tokens"), c.output_tokens = int_at(u, "output_tokens");
  }
  // A whole body that parsed is a whole message; the token limit still shows in `finish`.
  c.complete = true;
  return c;
}

void SseParser::feed(const std::string& bytes) {
  buf_ += bytes;
  // Events end with a blank line; only `data:` fields matter to either protocol.
  for (size_t end; (end = buf_.find('\n')) != std::string::npos;) {
    std::string line = buf_.substr(0, end);
    buf_.erase(0, end + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data:", 0) != 0) continue;
    std::string data = line.substr(5);
    if (!data.empty() && data.front() == ' ') data.erase(0, 1);
    event(data);
  }
}

void SseParser::event(const std::string& data) {
  if (data.empty()) return;  // an event without data
  ++events_;
  if (p_ == Provider::OpenAI && data == "[DONE]") {
    c_.complete = true;
    return;
  }
  json j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    // Keep-alives and comments are `:` lines, never data: a data event that is not a JSON object
    // is a stream the reply cannot be trusted from (a chunk of its text may be in it).
    if (c_.malformed.empty())
      c_.malformed = j.is_discarded() ? "has an event that is not valid JSON" : "has an event that is not a JSON object";
    return;
  }
  if (j.contains("error") && !j["error"].is_null()) {
    c_.error = error_text(j);
    return;
  }
  if (p_ == Provider::OpenAI) {
    if (j.contains("model") && j["model"].is_string()) c_.model = j["model"];
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
      const json& ch = j["choices"][0];
      const json& d = ch.value("delta", json::object());
      if (d.is_object() && d.contains("content") && d["content"].is_string()) c_.text += d["content"].get<std::string>();
      if (ch.contains("finish_reason") && ch["finish_reason"].is_string()) c_.finish = ch["finish_reason"];
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      if (auto v = int_at(j["usage"], "prompt_tokens")) c_.input_tokens = v;
      if (auto v = int_at(j["usage"], "completion_tokens")) c_.output_tokens = v;
    }
    return;
  }
  std::string type = j.value("type", "");
  if (type == "message_start" && j.contains("message") && j["message"].is_object()) {
    c_.model = j["message"].value("model", "");
    const json& u = j["message"].value("usage", json::object());
    if (auto v = int_at(u, "input_tokens")) c_.input_tokens = v;
    if (auto v = int_at(u, "output_tokens")) c_.output_tokens = v;
  } else if (type == "content_block_delta" && j.contains("delta") && j["delta"].is_object()) {
    if (j["delta"].value("type", "") == "text_delta") c_.text += j["delta"].value("text", "");
  } else if (type == "message_delta") {
    if (j.contains("delta") && j["delta"].is_object() && j["delta"].contains("stop_reason") &&
        j["delta"]["stop_reason"].is_string())
      c_.finish = j["delta"]["stop_reason"];
    if (auto v = int_at(j.value("usage", json::object()), "output_tokens")) c_.output_tokens = v;
  } else if (type == "message_stop") {
    c_.complete = true;
  }
}

std::optional<double> parse_retry_after(const std::string& value, int64_t now_epoch_s) {
  std::string v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; })) {
    try {
      return std::stod(v);
    } catch (...) {
      return std::nullopt;
    }
  }
  // HTTP-date: "Wed, 21 Oct 2015 07:28:00 GMT".
  std::tm tm{};
  if (!strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) return std::nullopt;
  return std::max<double>(0.0, static_cast<double>(timegm(&tm) - now_epoch_s));
}

double backoff_delay(int attempt, double base_s, double cap_s, std::optional<double> retry_after_s, double unit) {
  double ceiling = std::min(cap_s, base_s * std::pow(2.0, std::max(0, attempt - 1)));
  double d = unit * ceiling;  // full jitter: retries of many clients spread out
  if (retry_after_s) d = std::max(d, std::min(*retry_after_s, cap_s));
  return d;
}

bool retryable_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0.
size_t utf8_sequence(const std::string& s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = at(i);
  if (b < 0x80) return 1;
  size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b == 0xE0) lo = 0xA0;
  else if (b == 0xED) hi = 0x9F;
  else if (b == 0xF0) lo = 0x90;
  else if (b == 0xF4) hi = 0x8F;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (size_t n = utf8_sequence(s, i)) {
      out.append(s, i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string utf8_prefix(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // not inside a character
  return s.substr(0, end);
}

}  // namespace kopt::llm
