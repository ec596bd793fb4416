#include "artifact/bundle.h"

#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace kopt::ir {

namespace fs = std::filesystem;

bool is_bundle_dir(const std::string& path) { return fs::is_directory(path); }

std::unique_ptr<Bundle> load_bundle(const std::string& dir) {
  auto b = std::make_unique<Bundle>();
  b->dir = dir;
  fs::path meta_path = fs::path(dir) / "meta.json";
  std::ifstream in(meta_path);
  if (!in)
    throw UserError(fmt::format("{}: missing meta.json; not a kernelopt bundle (make one with `kernelopt capture`)",
                                meta_path.string()));
  try {
    b->meta = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(fmt::format("{}: invalid JSON ({}); re-capture the bundle", meta_path.string(), e.what()));
  }
  if (!b->meta.is_object() || b->meta.value("format", "") != "kernelopt-bundle")
    throw UserError(fmt::format("{}: not a kernelopt bundle (expected \"format\": \"kernelopt-bundle\")",
                                meta_path.string()));
  if (b->meta.value("format_version", 0) != 1)
    throw UserError(fmt::format("{}: bundle format_version {} is not supported (this kernelopt reads 1); re-capture it",
                                meta_path.string(), b->meta.value("format_version", 0)));
  if (!b->meta.contains("graphs") || !b->meta["graphs"].is_array() || b->meta["graphs"].empty())
    throw UserError(fmt::format("{}: no \"graphs\" recorded; re-capture the bundle", meta_path.string()));
  std::string problem = b->meta.value("problem", "problem.py");
  if (!fs::exists(fs::path(dir) / problem))
    throw UserError(fmt::format("{}: missing {} named by meta.json; re-capture the bundle",
                                (fs::path(dir) / problem).string(), problem));
  for (const auto& g : b->meta["graphs"]) {
    std::string module = g.value("module", "");
    fs::path mp = fs::path(dir) / module;
    if (module.empty() || !fs::exists(mp))
      throw UserError(fmt::format("{}: missing module file named by meta.json; re-capture the bundle", mp.string()));
    b->graphs.push_back(load(mp.string()));
  }
  return b;
}

}  // namespace kopt::ir
