// Predictions against published, measured training runs (tests/data/published_runs.yaml, a
// copy of ../shared/validation/published_runs.yaml). Fields a source does not publish are
// searched, and the best prediction is compared (the authors tuned their runs); each row says
// which fields were searched.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/result.h"
#include "planner/layout_search.h"

namespace meshplan {

struct PublishedRun {
  std::string id, source, table, cluster;
  int64_t gpus = 0;
  ModelSpec model;
  LayoutFix fix;
  int64_t tp_times_pp = 0;  // when only the product is published
  std::vector<std::string> searched;  // layout fields not published
  int64_t global_batch = 0;
  double measured_hardware_tflops = 0;  // per GPU, eq. 3 accounting (includes recompute)
  double measured_iteration_s = 0;
};

Result<std::vector<PublishedRun>> load_published_runs(const std::string& path);

struct ValidationRow {
  std::string id, source, table;
  std::string metric = "hardware TFLOP/s per GPU";
  double measured = 0, predicted = 0;
  double relative_error = 0;  // (predicted − measured) / measured
  std::string layout;         // the layout predicted (best over the searched fields)
  std::string searched;       // e.g. "mbs, vpp"
  bool fits = true;
};

struct ErrorSummary {
  std::string name;
  int64_t runs = 0;
  double mean_abs = 0, median_abs = 0, max_abs = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<ErrorSummary> summaries;  // per source, per source table, and "all"
};

ErrorSummary summarize_errors(const std::string& name, const std::vector<double>& relative_errors);

// `repo_root` locates topologies/ and profiles/. Cluster names map to shipped topologies:
// selene → selene-a100.yaml, jean_zay_a100 → jean-zay-a100.yaml, resized to the run's GPUs.
Result<ValidationReport> validate_runs(const std::vector<PublishedRun>& runs,
                                       const std::string& repo_root, int threads);

}  // namespace meshplan
