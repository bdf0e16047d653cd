// Helpers shared by the report and launcher tests: run the meshplan binary, read and write
// files, compare folders, render SVG with rsvg-convert.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace meshplan::test {

std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& text);
// Runs `meshplan <args>` from the source root with stdout/stderr to files in `dir`; returns the
// exit status.
int run_meshplan(const std::string& args, const std::filesystem::path& dir);
// Sorted file names in `dir`.
std::vector<std::string> file_names(const std::filesystem::path& dir);
// True when MESHPLAN_UPDATE_GOLDEN=1: tests rewrite golden files instead of comparing.
bool update_golden();
// Renders `svg` to PNG with rsvg-convert; returns the PNG's (width, height), (0, 0) on failure.
std::pair<uint32_t, uint32_t> render_png(const std::filesystem::path& svg,
                                         const std::filesystem::path& png);
// Width and height attributes of an SVG document's root element.
std::pair<uint32_t, uint32_t> svg_size(const std::string& svg);
// True when xmllint accepts `path` as well-formed XML.
bool well_formed_xml(const std::filesystem::path& path);
// A fresh empty temporary folder.
std::filesystem::path fresh_dir(const std::string& name);

}  // namespace meshplan::test
