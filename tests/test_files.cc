#include "tests/test_files.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace meshplan::test {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

int run_meshplan(const std::string& args, const std::filesystem::path& dir) {
  std::string cmd = "cd '" MESHPLAN_SOURCE_DIR "' && '" MESHPLAN_BINARY "' ";
  cmd += args;
  cmd += " > '" + (dir / "stdout.txt").string() + "' 2> '" + (dir / "stderr.txt").string() + "'";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::vector<std::string> file_names(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool update_golden() {
  const char* v = std::getenv("MESHPLAN_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::pair<uint32_t, uint32_t> render_png(const std::filesystem::path& svg,
                                         const std::filesystem::path& png) {
  std::string cmd = "rsvg-convert -o '" + png.string() + "' '" + svg.string() + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) return {0, 0};
  const std::string bytes = read_file(png);
  // PNG: 8-byte signature, then the IHDR chunk: length, "IHDR", width, height (big-endian).
  if (bytes.size() < 24 || bytes.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

std::pair<uint32_t, uint32_t> svg_size(const std::string& svg) {
  std::smatch m;
  if (!std::regex_search(svg, m, std::regex("<svg [^>]*width=\"(\\d+)\" height=\"(\\d+)\"")))
    return {0, 0};
  return {static_cast<uint32_t>(std::stoul(m[1])), static_cast<uint32_t>(std::stoul(m[2]))};
}

bool well_formed_xml(const std::filesystem::path& path) {
  // rsvg-convert's parser also rejects malformed XML; xmllint (libxml2-utils) is a second,
  // stricter opinion where installed.
  if (std::system("command -v xmllint > /dev/null 2>&1") != 0) return true;
  std::string cmd = "xmllint --noout '" + path.string() + "' 2>/dev/null";
  return std::system(cmd.c_str()) == 0;
}

std::filesystem::path fresh_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("meshplan-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

}  // namespace meshplan::test
