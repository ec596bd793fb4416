// libcurl, loaded when the first LLM request is made rather than linked: the
// engine runs on machines without libcurl (GPU hosts that get the binary
// alone), and only the LLM agents need it. A missing library is a UserError
// naming the fix, raised when the LLM agents are set up.
#pragma once

#include <curl/curl.h>

namespace kopt::llm {

struct CurlApi {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The loaded library (once, thread-safe; curl_global_init done). Throws UserError when absent.
const CurlApi& curl_api();

}  // namespace kopt::llm
