// Checks shared by the report and sweep golden tests: a generated folder against its golden copy
// (rewritten instead when MESHPLAN_UPDATE_GOLDEN=1), and every SVG in a folder well formed and
// rendering at its declared size.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/test_files.h"

namespace meshplan::test {

inline void check_svgs(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  for (const std::string& name : file_names(dir)) {
    if (fs::path(name).extension() != ".svg") continue;
    CAPTURE(name);
    const fs::path svg = dir / name;
    CHECK(well_formed_xml(svg));
    const auto declared = svg_size(read_file(svg));
    CHECK(declared.first > 0);
    const auto png = render_png(svg, dir / (name + ".png"));
    CHECK(png.first == declared.first);
    CHECK(png.second == declared.second);
    CHECK(fs::file_size(dir / (name + ".png")) > 1000);
    fs::remove(dir / (name + ".png"));
  }
}

// `out` holds the same files as `expected` (relative to the source root), byte for byte.
inline void check_against_golden(const std::filesystem::path& out,
                                 const std::filesystem::path& expected) {
  namespace fs = std::filesystem;
  if (update_golden()) {
    fs::remove_all(expected);
    fs::create_directories(expected);
    for (const std::string& name : file_names(out)) fs::copy_file(out / name, expected / name);
  }
  REQUIRE(file_names(out) == file_names(expected));
  for (const std::string& name : file_names(out)) {
    CAPTURE(name);
    CHECK(read_file(out / name) == read_file(expected / name));
  }
}

}  // namespace meshplan::test
