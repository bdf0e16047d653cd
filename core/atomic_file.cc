#include "core/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace meshplan {

std::optional<Diagnostic> write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      const int err = errno;
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return Diagnostic{
          {path, 0, 0, ""}, "", "", fmt::format("cannot write: {}", std::strerror(err))};
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (!ec) return std::nullopt;
  std::filesystem::remove(tmp, ec);
  return Diagnostic{{path, 0, 0, ""}, "", "", fmt::format("cannot write: {}", ec.message())};
}

}  // namespace meshplan
