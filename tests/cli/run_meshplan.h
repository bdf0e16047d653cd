// Runs the built meshplan executable (MESHPLAN_BINARY) and captures exit code, stdout, stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace meshplan::testing {

struct Run {
  int rc = -1;
  std::string out, err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `command` through the shell (quote paths yourself).
inline Run run_shell(const std::string& command) {
  static int counter = 0;
  const std::filesystem::path err =
      std::filesystem::temp_directory_path() /
      ("meshplan-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".err");
  const std::string cmd = command + " 2>'" + err.string() + "'";
  Run r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err);
  std::error_code ignored;
  std::filesystem::remove(err, ignored);
  return r;
}

// `args` is appended to the command line as is (quote paths yourself).
inline Run run_meshplan(const std::string& args) {
  return run_shell(std::string("'") + MESHPLAN_BINARY + "' " + args);
}

// "'<repo>/<relative>'" for command lines.
inline std::string repo_path(const std::string& relative) {
  return std::string("'") + MESHPLAN_SOURCE_DIR + "/" + relative + "'";
}

}  // namespace meshplan::testing
