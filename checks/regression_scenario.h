// Regression scenarios (`meshplan regress`, DESIGN.md §5): named planner inputs whose
// predictions a baseline pins. The file format is documented in docs/regress.md:
//
//   root: ../..                 # optional; the directory the paths below are relative to,
//                               # itself relative to this file's directory (default: ".")
//   scenarios:
//     - name: llama3-8b-h100-1n
//       model: models/llama3-8b.yaml
//       cluster: topologies/dgx-h100-1n.yaml
//       profile: profiles/h100-published.yaml   # optional (default: the cluster's)
//       seq_len: 8192                            # optional (default: the model's)
//       global_batch: 64                         # optional (default: the model's)
//       gpus: 8                                  # optional (default: the whole cluster)
//       layout: best                             # or "tp=8,pp=4,..." (a fixed layout)
//       fix: "tp=8"                              # optional, with `best` only: pinned fields
//       framework: deepspeed                     # optional (default: megatron-core), a preset
//                                                # of planner/framework_preset.h
//
// Paths therefore never depend on the current directory, only on where the file lies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/result.h"

namespace meshplan {

struct RegressionScenario {
  std::string name;  // unique in the file; letters, digits, '.', '_', '-'
  // Resolved paths: root-relative paths joined to the root and normalized (relative to the
  // current directory when the scenario file was named relatively).
  std::string model_path, cluster_path, profile_path;  // profile_path "": the cluster's
  int64_t seq_len = 0;                                 // 0: the model's training.seq_len
  int64_t global_batch = 0;                            // 0: the model's training.global_batch
  int64_t gpus = 0;                                    // 0: every GPU of the cluster
  std::optional<std::string> layout;                   // nullopt: the search's best layout
  std::string fix;                          // with the search: pinned layout fields ("" none)
  std::string framework = "megatron-core";  // a framework_preset.h name, checked on load
  // Where the entry, its layout and its fix are written, for diagnostics found later, and the
  // entry's field path ("scenarios[3]").
  SourceLocation where, layout_where, fix_where;
  std::string path;
};

// Reads and checks a scenario file: known keys, types, unique names, files that exist.
// Does not load the models or clusters (evaluate_scenarios does). Every error is returned.
Result<std::vector<RegressionScenario>> load_scenarios(const std::string& path);

// Moves diagnostics about a layout string (column-positioned, as parse_layout reports them, or
// without position, as check_layout does) onto `where`, the string's place in its YAML file,
// and prefixes their fields with `field` ("scenarios[0].layout" + ".tp").
std::vector<Diagnostic> relocate_layout_errors(std::vector<Diagnostic> errors,
                                               const SourceLocation& where,
                                               const std::string& field);

}  // namespace meshplan
