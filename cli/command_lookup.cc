#include "cli/command_lookup.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/edit_distance.h"

namespace meshplan::cli {
namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names = subcommand_names(app);
  names.insert(names.begin(), "help");
  return names;
}

}  // namespace

std::string unknown_command_error(const std::string& word,
                                  const std::vector<std::string>& commands) {
  return fmt::format("error: unknown command '{}'{}; 'meshplan help' lists the commands\n", word,
                     did_you_mean(word, commands));
}

namespace {

// The deepest subcommand the words selected ("calibrate import nccl-tests"), its path and where
// its options are listed.
struct SelectedCommand {
  const CLI::App* command = nullptr;
  std::string path, help;
};

SelectedCommand selected_command(const CLI::App& app) {
  SelectedCommand s{&app, "meshplan", ""};
  for (auto subs = s.command->get_subcommands(); !subs.empty();
       subs = s.command->get_subcommands()) {
    s.command = subs.front();
    s.path += " " + s.command->get_name();
  }
  s.help = s.path == "meshplan"
               ? "'meshplan help' lists the commands"
               : fmt::format("'{}' lists its options", "meshplan help" + s.path.substr(8));
  return s;
}

}  // namespace

std::string option_error(const CLI::App& app, const CLI::ParseError& error) {
  const SelectedCommand s = selected_command(app);
  const std::string what = error.what();
  constexpr std::string_view kRequired = " is required";
  if (what.size() > kRequired.size() && what.ends_with(kRequired) && what.front() == '-')
    return fmt::format("error: option '{}' is required for '{}'; {}\n",
                       what.substr(0, what.size() - kRequired.size()), s.path, s.help);
  return fmt::format("error: {} (in '{}'); {}\n", what, s.path, s.help);
}

std::string unexpected_arguments_error(const CLI::App& app) {
  const SelectedCommand s = selected_command(app);
  const CLI::App* command = s.command;
  const std::string& path = s.path;
  const std::string& help = s.help;
  const std::vector<std::string> extras = app.remaining(true);
  auto flag = std::find_if(extras.begin(), extras.end(),
                           [](const std::string& w) { return w.size() > 1 && w[0] == '-'; });
  if (flag == extras.end()) {
    const std::string word = extras.empty() ? std::string() : extras.front();
    // A command with subcommands of its own (calibrate): the word was meant as one of them.
    const std::vector<std::string> subs = subcommand_names(*command);
    if (!subs.empty() && !word.empty())
      return fmt::format("error: unknown command '{} {}'{}; {}\n", path, word,
                         did_you_mean(word, subs), help);
    return fmt::format("error: unexpected argument '{}' for '{}'; {}\n", word, path, help);
  }
  const std::string word = flag->substr(0, flag->find('='));
  std::vector<std::string> options;
  for (const CLI::Option* option : command->get_options()) {
    for (const std::string& name : option->get_lnames()) options.push_back("--" + name);
    for (const std::string& name : option->get_snames()) options.push_back("-" + name);
  }
  return fmt::format("error: unknown option '{}' for '{}'{}; {}\n", word, path,
                     did_you_mean(word, options), help);
}

std::optional<int> handle_first_word(const CLI::App& app, std::vector<std::string>& args,
                                     std::string& err) {
  if (args.size() < 2 || args[1].empty() || args[1][0] == '-') return std::nullopt;
  const std::vector<std::string> names = command_names(app);
  auto known = [&](const std::string& w) {
    return w != "help" && std::find(names.begin(), names.end(), w) != names.end();
  };
  if (args[1] != "help") {
    if (known(args[1])) return std::nullopt;
    err = unknown_command_error(args[1], names);
    return 2;
  }
  if (args.size() == 2) {
    args[1] = "--help";
    return std::nullopt;
  }
  if (!known(args[2])) {
    err = unknown_command_error(args[2], names);
    return 2;
  }
  // `help calibrate import …`: every further word names a subcommand of the one before it.
  std::vector<std::string> path = {args[0], args[2]};
  const CLI::App* command = app.get_subcommand(args[2]);
  for (size_t i = 3; i < args.size(); ++i) {
    const std::vector<std::string> subs = subcommand_names(*command);
    if (std::find(subs.begin(), subs.end(), args[i]) == subs.end()) {
      std::string at = "meshplan";
      for (size_t j = 1; j < path.size(); ++j) at += " " + path[j];
      err = subs.empty() ? fmt::format(
                               "error: '{}' has no subcommands; 'meshplan help{}' lists "
                               "its options\n",
                               at, at.substr(8))
                         : fmt::format(
                               "error: unknown command '{} {}'{}; 'meshplan help{}' "
                               "lists its commands\n",
                               at, args[i], did_you_mean(args[i], subs), at.substr(8));
      return 2;
    }
    command = command->get_subcommand(args[i]);
    path.push_back(args[i]);
  }
  path.emplace_back("--help");
  args = path;
  return std::nullopt;
}

}  // namespace meshplan::cli
