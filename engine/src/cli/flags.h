// The command line's one validation layer: every flag's value is checked when it is parsed, and every
// parse failure (a bad value, an unknown flag or command, a missing argument) becomes one line in the
// project's format, `kernelopt: error: <what>; <the fix>`, with exit code 2 (main.cpp prints it).
#pragma once

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace kopt::cli {

// The smallest value a numeric flag accepts.
enum class Least {
  zero,         // >= 0 (a count that may be none: --seeds, --capture-jobs; a tolerance)
  above_zero,   // > 0 (a length of time: --budget)
  one,          // >= 1 (a count or a whole number of seconds: --reps, --timeout, --max-cascades; --gamma)
};

// Checks a number's text before CLI11 converts it, so "abc" and "-1" fail alike, naming the value,
// what the flag accepts and, as the fix, an example (the flag's default where it has one).
// `name` is the flag the messages name; `most`, where finite, the largest value accepted.
CLI::Validator number(const std::string& name, Least least, bool whole, const std::string& example,
                      double most = std::numeric_limits<double>::infinity());

// A numeric option bound to `field`, with `field`'s current value as the default shown in the help and as
// the example of a valid value, unless `example` is given (a default that means "automatic").
template <class T>
CLI::Option* add_number(CLI::App& sub, const std::string& name, T& field, const std::string& description,
                        Least least, const std::string& example = "") {
  CLI::Option* o = sub.add_option(name, field, description);
  if (example.empty()) o->capture_default_str();
  return o->check(number(o->get_name(), least, std::is_integral_v<T>, example.empty() ? fmt::format("{}", field)
                                                                                         : example));
}

// One of `choices` (--device cuda|cpu, --dtype, --agents).
CLI::Validator one_of(const std::string& name, const std::vector<std::string>& choices);

// GPU indices, comma-separated (--gpus of optimize and bench); `one`: a single index (the commands that
// start one worker). An index is a number >= 0, or a GPU UUID or MIG name as CUDA_VISIBLE_DEVICES takes.
CLI::Validator gpu_list(const std::string& name, bool one);

// The same option under an old name, hidden from the help, so scripts written for it keep working.
CLI::Option* add_hidden_alias(CLI::App& sub, const std::string& old_name, std::string& field);

// What to do before CLI11 parses: `kernelopt help [CMD...]` becomes `kernelopt [CMD...] --help`, and a
// command that is not one (`kernelopt optimise`) is an error naming the closest command. Returns the
// argument list to parse; throws UserError for an unknown command or none at all.
std::vector<std::string> resolve_commands(const CLI::App& app, std::vector<std::string> args);

// CLI11's parse error `e` as the one line after "kernelopt: error: ", naming the subcommand it concerns.
std::string parse_error_line(CLI::App& app, const CLI::ParseError& e);

// The candidate nearest to `word` by edit distance, if near enough to be a likely typo; else "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace kopt::cli
