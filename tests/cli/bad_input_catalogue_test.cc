// The bad-input catalogue (issue 15): every case of tests/data/bad_inputs/cases.yaml run as a
// user would, each pinned to its exit status, an empty stdout and its exact stderr
// (tests/data/bad_inputs/<id>.err). MESHPLAN_UPDATE_GOLDEN=1 rewrites the .err files.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/executable_dir.h"
#include "run_meshplan.h"
#include "tests/test_files.h"

namespace meshplan {
namespace {

namespace fs = std::filesystem;

const fs::path kCatalogue = fs::path(MESHPLAN_TEST_DATA) / "bad_inputs";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// {repo}, {dir}, {M} and {C} in a command line (paths quoted for the shell) or in a file.
std::string expand(std::string text, const fs::path& dir, bool quote) {
  const std::string q = quote ? "'" : "";
  const std::string repo = q + MESHPLAN_SOURCE_DIR + q;
  text = replace_all(text, "{M}", "{repo}/models/llama3-8b.yaml");
  text = replace_all(text, "{C}", "{repo}/topologies/dgx-h100-1n.yaml");
  text = replace_all(text, "{repo}", repo);
  return replace_all(text, "{dir}", q + dir.string() + q);
}

// The paths of this machine written back as placeholders, so the expected text is portable:
// {share} is the data folder beside the executable (installed_data_dir; profiles are looked for
// there), wherever the build folder is.
std::string portable(std::string text, const fs::path& dir) {
  text = replace_all(text, dir.string(), "{dir}");
  text = replace_all(text, installed_data_dir(fs::path(MESHPLAN_BINARY).parent_path()).string(),
                     "{share}");
  return replace_all(text, MESHPLAN_SOURCE_DIR, "{repo}");
}

YAML::Node cases() { return YAML::LoadFile((kCatalogue / "cases.yaml").string()); }

TEST_CASE("the catalogue covers at least 60 classes of bad input, each named once") {
  std::set<std::string> ids, classes;
  for (const YAML::Node& c : cases()) {
    CHECK(ids.insert(c["id"].as<std::string>()).second);
    CHECK(classes.insert(c["class"].as<std::string>()).second);
  }
  CHECK(classes.size() >= 60);
}

TEST_CASE("every bad input gets its one message, its exit status and nothing on stdout") {
  for (const YAML::Node& c : cases()) {
    const std::string id = c["id"].as<std::string>();
    SUBCASE(id.c_str()) {
      const fs::path dir = test::fresh_dir("bad-input-" + id);
      if (c["files"])
        for (const auto& file : c["files"])
          test::write_file(dir / file.first.as<std::string>(),
                           expand(file.second.as<std::string>(), dir, false));
      const testing::Run run =
          testing::run_meshplan(expand(c["args"].as<std::string>(), dir, true));
      const std::string err = portable(run.err, dir);
      const fs::path golden = kCatalogue / (id + ".err");
      if (test::update_golden()) test::write_file(golden, err);
      INFO(c["class"].as<std::string>());
      CHECK(run.rc == (c["exit"] ? c["exit"].as<int>() : 2));
      CHECK(run.out == "");
      CHECK(err == test::read_file(golden));
      fs::remove_all(dir);
    }
  }
}

}  // namespace
}  // namespace meshplan
