#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace meshplan {
namespace {

Diagnostic cannot_write(const std::string& path, const std::string& reason) {
  return Diagnostic{{path, 0, 0, ""}, "", "", fmt::format("cannot write: {}", reason)};
}

// Writes `text` to a new file `tmp` and flushes it to disk; returns errno, 0 on success.
int write_and_sync(const std::string& tmp, const std::string& text) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return err;
    }
    done += static_cast<size_t>(n);
  }
  const int synced = ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  return synced != 0 ? synced : closed;
}

}  // namespace

std::optional<Diagnostic> write_file_atomically(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return cannot_write(path, "it is a directory");
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  if (const int err = write_and_sync(tmp, text); err != 0) {
    std::filesystem::remove(tmp, ec);
    return cannot_write(path, std::strerror(err));
  }
  std::filesystem::rename(tmp, path, ec);
  if (!ec) return std::nullopt;
  const std::string reason = ec.message();
  std::filesystem::remove(tmp, ec);
  return cannot_write(path, reason);
}

}  // namespace meshplan
