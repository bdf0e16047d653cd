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

// After CLI11 refused words it did not expect (CLI::ExtrasError, whose own text is "The
// following arguments were not expected: tp=4 --layuot"): "error: unknown option '--layuot' for
// 'meshplan memory' (did you mean '--layout'?); 'meshplan help memory' lists its options\n", or
// for a stray word "error: unexpected argument 'foo' for 'meshplan memory'; …". `app` is the
// top-level app after the failed parse (its selected subcommands and remaining words).
std::string unexpected_arguments_error(const CLI::App& app);
// Any other refusal of CLI11's (a required option missing, a value out of range or of the wrong
// type, a file that does not exist) as one line naming the command and where its options are
// listed, instead of CLI11's text and its "Run with --help" line.
std::string option_error(const CLI::App& app, const CLI::ParseError& error);

}  // namespace meshplan::cli
