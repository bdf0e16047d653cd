// Command-line argument lists for launcher exports: "flag value" lines joined with shell
// continuations, so the block pastes into a launch script.
#pragma once

#include <string>
#include <vector>

namespace meshplan {

class LauncherArgs {
 public:
  // A flag without a value ("--sequence-parallel").
  void flag(const std::string& name) { lines_.push_back(name); }
  // A flag with a value ("--tensor-model-parallel-size 8").
  template <class T>
  void arg(const std::string& name, const T& value) {
    std::string line = name;
    line += ' ';
    line += to_text(value);
    lines_.push_back(std::move(line));
  }
  // `comment` lines prefixed "# ", then the arguments, one per line, each but the last ending
  // in " \".
  std::string render(const std::vector<std::string>& comment) const;

 private:
  static std::string to_text(const std::string& s) { return s; }
  static std::string to_text(const char* s) { return s; }
  static std::string to_text(bool b) { return b ? "true" : "false"; }
  template <class T>
  static std::string to_text(const T& v) {
    return std::to_string(v);
  }
  std::vector<std::string> lines_;
};

}  // namespace meshplan
