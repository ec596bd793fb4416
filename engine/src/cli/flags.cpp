#include "cli/flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.h"
#include "util/split.h"

namespace kopt::cli {

namespace {

std::string range_text(Least least, bool whole) {
  const char* kind = whole ? "a whole number" : "a number";
  switch (least) {
    case Least::zero: return fmt::format("{} of 0 or more", kind);
    case Least::above_zero: return fmt::format("{} above 0", kind);
    case Least::one: return fmt::format("{} of 1 or more", kind);
  }
  return kind;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(s->get_name());
  return names;
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
  auto found = app.get_subcommands([&](const CLI::App* s) { return s->get_name() == name; });
  return found.empty() ? nullptr : found.front();
}

// "optimize", "bench merge": the command words of `app` (the root is none).
std::string command_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* a = &app; a->get_parent(); a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

std::string help_hint(const CLI::App& app) {
  std::string path = command_path(app);
  return path.empty() ? "kernelopt help" : "kernelopt help " + path;
}

// The subcommand the parse had reached when it failed: its error concerns that one's flags.
CLI::App& active_command(CLI::App& app) {
  CLI::App* at = &app;
  for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) at = subs.front();
  return *at;
}

// Every spelling of `app`'s visible flags (--out, -o), for "did you mean".
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); })) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the usual typos.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// What follows "prefix" in CLI11's message `what`, or "" when it does not start so.
std::string after(const std::string& what, const std::string& prefix) {
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : "";
}

}  // namespace

CLI::Validator number(const std::string& name, Least least, bool whole, const std::string& example, double most) {
  const std::string range = std::isinf(most) ? range_text(least, whole)
                                             : fmt::format("{} from {} to {}", whole ? "a whole number" : "a number",
                                                           least == Least::one ? 1 : 0, most);
  auto check = [=](std::string& text) -> std::string {
    const std::string fix = fmt::format("give {}, e.g. {} {}", range, name, example);
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(begin, &end);
    if (text.empty() || end != begin + text.size() || errno == ERANGE || !std::isfinite(v))
      return fmt::format("{} {}: not a number; {}", name, text, fix);
    if (whole && (v != std::floor(v) || text.find_first_of(".eE") != std::string::npos))
      return fmt::format("{} {}: not a whole number; {}", name, text, fix);
    bool ok = least == Least::zero ? v >= 0 : least == Least::above_zero ? v > 0 : v >= 1;
    if (!ok || v > most) return fmt::format("{} {}: out of range; {}", name, text, fix);
    return "";
  };
  // Shown in the help after the type (INT:POSITIVE=600).
  const char* shown = least == Least::zero ? "NONNEGATIVE" : least == Least::above_zero || whole ? "POSITIVE" : "AT_LEAST_1";
  return CLI::Validator(check, shown);
}

CLI::Validator one_of(const std::string& name, const std::vector<std::string>& choices) {
  auto check = [=](std::string& text) -> std::string {
    if (std::find(choices.begin(), choices.end(), text) != choices.end()) return "";
    std::string near = closest(text, choices);
    return fmt::format("{} {}: not one of {}; {}", name, text, fmt::join(choices, ", "),
                       near.empty() ? fmt::format("e.g. {} {}", name, choices.front())
                                    : fmt::format("did you mean {} {}?", name, near));
  };
  return CLI::Validator(check, "");  // the choices are in each flag's description
}

CLI::Validator gpu_list(const std::string& name, bool one) {
  auto check = [=](std::string& text) -> std::string {
    const std::string fix = one ? fmt::format("this command starts one worker: give one GPU index, e.g. {} 0", name)
                                : fmt::format("give GPU indices separated by commas, e.g. {} 0,1", name);
    std::vector<std::string> items = split_list(text);
    size_t commas = static_cast<size_t>(std::count(text.begin(), text.end(), ','));
    if (items.empty() || items.size() != commas + 1) return fmt::format("{} {}: an empty GPU index; {}", name, text, fix);
    if (one && items.size() > 1) return fmt::format("{} {}: more than one GPU; {}", name, text, fix);
    for (const std::string& i : items)
      if (i.empty() || i[0] == '-') return fmt::format("{} {}: {} is not a GPU index; {}", name, text, i, fix);
    return "";
  };
  return CLI::Validator(check, "");
}

CLI::Option* add_hidden_alias(CLI::App& sub, const std::string& old_name, std::string& field) {
  return sub.add_option(old_name, field)->group("");
}

std::vector<std::string> resolve_commands(const CLI::App& app, std::vector<std::string> args) {
  const bool help = !args.empty() && args.front() == "help";
  if (help) args.erase(args.begin());
  if (!args.empty() && args.front().rfind('-', 0) == 0) {
    // Before the command only --help and --version mean anything.
    const std::string flag = args.front().substr(0, args.front().find('='));
    std::vector<std::string> known = flag_names(app);
    known.insert(known.end(), {"--help", "-h"});
    if (std::find(known.begin(), known.end(), flag) == known.end())
      throw UserError(fmt::format("unknown flag {}; flags go after their command, e.g. kernelopt optimize MODEL.py "
                                  "{} (kernelopt help lists the commands)",
                                  flag, flag));
  }
  const CLI::App* at = &app;
  size_t i = 0;
  for (; i < args.size() && !args[i].empty() && args[i][0] != '-'; ++i) {
    std::vector<std::string> names = subcommand_names(*at);
    if (names.empty()) break;
    if (const CLI::App* sub = find_subcommand(*at, args[i])) {
      at = sub;
      continue;
    }
    // A word where a command must be; elsewhere (bench SUITE) it is the command's own argument.
    if (!help && at->get_require_subcommand_min() == 0) break;
    std::string path = command_path(*at);
    std::string prefix = path.empty() ? "" : path + " ";
    std::string near = closest(args[i], names);
    throw UserError(near.empty() ? fmt::format("unknown command '{}{}'; the commands are {} ({})", prefix, args[i],
                                               fmt::join(names, ", "), help_hint(*at))
                                 : fmt::format("unknown command '{}{}'; did you mean '{}{}'?", prefix, args[i],
                                               prefix, near));
  }
  if (help) {
    args.resize(i);  // the command words; `kernelopt help optimize X.py` is still optimize's help
    args.push_back("--help");
  } else if (args.empty()) {
    throw UserError(fmt::format("no command given; run kernelopt help for the commands ({})",
                                fmt::join(subcommand_names(app), ", ")));
  }
  return args;
}

std::string parse_error_line(CLI::App& app, const CLI::ParseError& e) {
  const CLI::App& cmd = active_command(app);
  const std::string what = e.what(), path = command_path(cmd), hint = "see " + help_hint(cmd);
  const std::string in = path.empty() ? "" : path + ": ";
  if (dynamic_cast<const CLI::ValidationError*>(&e)) {
    // "NAME: MESSAGE"; this file's validators begin MESSAGE with the flag's name, CLI11's own do not.
    size_t colon = what.find(": ");
    if (colon != std::string::npos) {
      std::string name = what.substr(0, colon), message = what.substr(colon + 2);
      if (message.rfind(name, 0) == 0) return message;
      return fmt::format("{} {}; {}", name, message, hint);
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::string list = what.substr(what.find(": ") == std::string::npos ? 0 : what.find(": ") + 2);
    std::vector<std::string> extras = split_list(list, ' ');
    auto flag = std::find_if(extras.begin(), extras.end(), [](const std::string& a) { return a.rfind('-', 0) == 0; });
    if (flag != extras.end()) {
      std::string name = flag->substr(0, flag->find('='));
      std::string near = closest(name, flag_names(cmd));
      return fmt::format("{}unknown flag {}; {}", in, name,
                         near.empty() ? "the flags are in " + help_hint(cmd) : "did you mean " + near + "?");
    }
    return fmt::format("{}unexpected argument{} {}; {}", in, extras.size() > 1 ? "s" : "", fmt::join(extras, " "),
                       hint);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    if (what == "A subcommand is required" || what.rfind("A subcommand", 0) == 0)
      return fmt::format("{}give a command: {}; {}", in, fmt::join(subcommand_names(cmd), ", "), hint);
    std::string name = what.substr(0, what.find(" is required"));
    const CLI::Option* opt = nullptr;
    for (const CLI::Option* o : cmd.get_options())
      if (o->get_name() == name) opt = o;
    std::string description = opt ? opt->get_description() : "";
    if (!name.empty() && name[0] == '-')
      return fmt::format("{}{} is missing; give {}{}", in, name, name, description.empty() ? "" : " (" + description + ")");
    return fmt::format("{}the {} argument is missing; give {}", in, name,
                       description.empty() ? "it (" + hint + ")" : description);
  }
  if (std::string v = after(what, "Could not convert: "); !v.empty()) {
    size_t eq = v.find(" = ");
    if (eq != std::string::npos)
      return fmt::format("{} {}: not a valid value; {}", v.substr(0, eq), v.substr(eq + 3), hint);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    // A flag given without its value: "--budget: 1 required FLOAT:POSITIVE missing", or "Expected exactly 1
    // arguments to --budget, got 0".
    size_t colon = what.find(": "), to = what.find(" to "), comma = what.find(',', to == std::string::npos ? 0 : to);
    if (what.rfind('-', 0) == 0 && colon != std::string::npos)
      return fmt::format("{}{} needs a value; {}", in, what.substr(0, colon), hint);
    if (to != std::string::npos && comma != std::string::npos)
      return fmt::format("{}{} needs a value; {}", in, what.substr(to + 4, comma - to - 4), hint);
  }
  std::string message = what;
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return fmt::format("{}{}; {}", in, message, hint);
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::string::npos;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    // A prefix of three or more characters (`opt`, `--bud`) also names its command or flag.
    if (word.size() >= 3 && c.rfind(word, 0) == 0) d = 0;
    if (d < best_distance) best = c, best_distance = d;
  }
  // A typo is a letter or two, and no more than a third of the word: beyond, it is another word (a word of
  // three letters one letter away from a choice, `gpu` for `cpu`, is as likely another word).
  size_t most = word.size() < 4 ? 0 : std::clamp<size_t>(word.size() / 3, 1, 2);
  return best_distance <= most ? best : "";
}

}  // namespace kopt::cli
