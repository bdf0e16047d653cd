// Where the running executable is: the folder that locates what ships beside it (the build
// tree's backend modules; an install's ../lib/meshplan and ../share/meshplan).
#pragma once

#include <filesystem>

namespace meshplan {

// The folder holding the running executable (from /proc/self/exe); empty when unknown.
std::filesystem::path executable_dir();

// The data folder an install keeps beside the executable in folder `bin`: bin/../share/meshplan.
inline std::filesystem::path installed_data_dir(const std::filesystem::path& bin) {
  return (bin / ".." / "share" / "meshplan").lexically_normal();
}

}  // namespace meshplan
