#include "llm/curl_api.h"

#include <dlfcn.h>

#include <string>

#include "util/error.h"

namespace kopt::llm {

namespace {

struct Loaded {
  CurlApi api{};
  std::string error;
  Loaded() {
    void* h = nullptr;
    for (const char* name : {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) {
      error = "the LLM agents need libcurl (libcurl.so.4), which is not installed here: install it "
              "(apt-get install libcurl4) or put it on LD_LIBRARY_PATH, or run with --agents builtin";
      return;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn && error.empty()) error = std::string("libcurl lacks ") + name + "; install libcurl4";
    };
    sym(api.global_init, "curl_global_init");
    sym(api.easy_init, "curl_easy_init");
    sym(api.easy_setopt, "curl_easy_setopt");
    sym(api.easy_perform, "curl_easy_perform");
    sym(api.easy_getinfo, "curl_easy_getinfo");
    sym(api.easy_cleanup, "curl_easy_cleanup");
    sym(api.easy_strerror, "curl_easy_strerror");
    sym(api.slist_append, "curl_slist_append");
    sym(api.slist_free_all, "curl_slist_free_all");
    if (error.empty()) api.global_init(CURL_GLOBAL_DEFAULT);
  }
};

}  // namespace

const CurlApi& curl_api() {
  static const Loaded loaded;  // C++ guarantees one thread-safe initialization
  if (!loaded.error.empty()) throw UserError(loaded.error);
  return loaded.api;
}

}  // namespace kopt::llm
