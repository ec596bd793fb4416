// The prompt templates (prompts/*.md in the source tree): compiled into the
// binary so an installed kernelopt needs no data files, and overridable at
// run time by $KERNELOPT_PROMPTS (a directory of edited copies) to try new
// wording without rebuilding. Each template's first line names its role and
// version ("# kernelopt coder prompt v1"); transcripts record that version.
#pragma once

#include <map>
#include <string>

namespace kopt::llm {

struct Prompt {
  std::string role;     // "coder"
  std::string version;  // "coder/v1"
  std::string text;     // the whole template, its first line included
};

// The template of `role` (system, profiler, planner, coder, reviewer, tuner). Throws UserError
// when an override directory lacks it or its first line is malformed.
Prompt prompt(const std::string& role);

// `text` with every {{name}} replaced by vars[name]. A placeholder without a value is an
// internal error (a template and the engine disagree), never silently left in a prompt.
std::string render(const std::string& text, const std::map<std::string, std::string>& vars);

// The embedded templates (generated at build time from prompts/*.md): name -> text.
const std::map<std::string, std::string>& embedded_prompts();

}  // namespace kopt::llm
