// Writing a whole file so that readers never see it half-written: the text goes to a temporary
// file beside the target, which is then renamed over it (rename is atomic within a file system).
#pragma once

#include <optional>
#include <string>

#include "core/diagnostic.h"

namespace meshplan {

// Replaces the file at `path` with `text`. Returns nothing on success; on failure a diagnostic
// located at `path` whose rule says "cannot write: <reason>", with the target left as it was and
// no temporary file left behind.
std::optional<Diagnostic> write_file_atomically(const std::string& path, const std::string& text);

}  // namespace meshplan
