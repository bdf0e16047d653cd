#include "launchers/launcher_args.h"

namespace meshplan {

std::string LauncherArgs::render(const std::vector<std::string>& comment) const {
  std::string out;
  for (const std::string& c : comment) {
    out += "# ";
    out += c;
    out += '\n';
  }
  for (size_t i = 0; i < lines_.size(); ++i) {
    out += lines_[i];
    out += i + 1 < lines_.size() ? " \\\n" : "\n";
  }
  return out;
}

}  // namespace meshplan
