// What `meshplan <word>` means before CLI11 parses the rest: `help [command]`, a known command,
// or an unknown word (CLI11 alone would call it an unexpected argument and suggest nothing).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshplan::cli {

// "error: unknown command 'memroy' (did you mean 'memory'?); 'meshplan help' lists the
// commands\n" — `commands` are the known names, `help` included.
std::string unknown_command_error(const std::string& word,
                                  const std::vector<std::string>& commands);

// Looks at args[1] (args[0] is the program). An unknown command is reported to `err` and its
// exit status (2) returned. Otherwise nullopt, and CLI11 parses `args`, which `help` and
// `help <command>` have been rewritten into (`--help`, `<command> --help`) so that help reads
// exactly as with the flag.
std::optional<int> handle_first_word(const CLI::App& app, std::vector<std::string>& args,
                                     std::string& err);

}  // namespace meshplan::cli
