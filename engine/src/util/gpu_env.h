// GPU indices (--gpus) name positions among the GPUs this process can see. A scheduler or a lane
// script that sets CUDA_VISIBLE_DEVICES=2,3 makes "--gpus 0" mean the device "2"; a worker or a
// capture is started with that entry itself, so it sees exactly that GPU. Without the mapping a
// child started with CUDA_VISIBLE_DEVICES=0 would land on the machine's first GPU, beside
// whatever else runs there (two lanes of a suite, timing each other's kernels).
#pragma once

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "util/error.h"
#include "util/split.h"

namespace kopt {

inline std::string visible_device(const std::string& index) {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!env) return index;
  size_t used = 0;
  unsigned long i = 0;
  try {
    i = std::stoul(index, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != index.size() || index.empty() || index[0] == '-') return index;  // a UUID or MIG name: as given
  std::vector<std::string> list = split_list(env);
  if (list.empty())
    throw UserError("no CUDA GPU is visible (CUDA_VISIBLE_DEVICES is empty): make one visible, or pass --device cpu");
  if (i >= list.size())
    throw UserError(fmt::format("GPU {} is not visible: CUDA_VISIBLE_DEVICES={} lists {} GPU(s); pass --gpus "
                                "with indices below {}",
                                index, env, list.size(), list.size()));
  return list[i];
}

}  // namespace kopt
