// Overlaying one calibration profile on another: what a one-node calibration measured (GEMMs,
// HBM, attention, sustained clock) on top of a profile that holds what it could not measure
// (multi-node collectives, FP8 recipe overheads). One home for the rule of which section wins.
#pragma once

#include <string>
#include <vector>

#include "core/profile.h"

namespace meshplan {

// One input of a merge: the profile and the label its sections are credited to (a file name).
struct ProfileLayer {
  CalibrationProfile profile;
  std::string label;
};

// Folds `layers` left to right; a later layer's section replaces an earlier one's:
//   gemm: per dtype; hbm_GBps, attention_efficiency, sustained_compute_ratio,
//   gpu_compute_spread and the bus
//   efficiencies: when the later layer has them (non-zero); attention samples: per kernel (a
//   layer that timed cuDNN replaces every cuDNN sample, FA3 samples stay);
//   fp8_quantization_overhead: per recipe; collectives: per (collective, level, group size);
//   peer_all_reduce: when the later layer has it.
// Provenance: field by field the last layer that gives it, every layer's command joined by "; ",
// and `sources` saying which sections came from which label and how that layer was made
// ("merged: gemm bf16, hbm from FILE (measured)": planner/calibration.h reads these to tag each
// value measured or published), then every layer's own sources
// (notes likewise), prefixed by its label. Complete only when every layer is; `missing` lists
// each layer's, prefixed by its label. REQUIRES: layers non-empty.
CalibrationProfile merge_profiles(const std::vector<ProfileLayer>& layers, const std::string& name);

// Where a section of `profile` came from: the file and how its "merged: … from FILE (how)"
// credit names, else no file and the profile's provenance.how. `section` is a credit key:
// "gemm bf16", "hbm", "attention_efficiency", "attention cudnn", "all_reduce x8 on nvlink", ….
// A merge credits each section with its layer's own origin of it, so merges of merges keep
// every section's origin.
struct SectionOrigin {
  std::string file, how;
};
SectionOrigin section_origin(const CalibrationProfile& profile, const std::string& section);

}  // namespace meshplan
