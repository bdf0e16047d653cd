// A file of a generated report: its name in the report folder and its bytes. Renderers return
// them; only the executable writes them.
#pragma once

#include <string>

namespace meshplan {

struct ReportFile {
  std::string name;  // relative to the report folder: "report.md", "memory.svg", ...
  std::string content;
};

}  // namespace meshplan
