// Shared fixtures for planner tests: shipped specs by name, and small synthetic ones.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "core/profile.h"

namespace meshplan::testing {

inline ModelSpec shipped_model(const std::string& name) {
  Result<ModelSpec> r = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/models/" + name + ".yaml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

inline ClusterSpec shipped_cluster(const std::string& name) {
  Result<ClusterSpec> r =
      load_cluster(std::string(MESHPLAN_SOURCE_DIR) + "/topologies/" + name + ".yaml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

// `text` parsed and checked for `gpus` GPUs and `t`'s batch (dp resolved). REQUIRES: it passes
// check_layout.
inline Layout checked_layout(const std::string& text, const ModelSpec& m, int64_t gpus,
                             const TrainingSpec& t) {
  Layout l = parse_layout(text).value();
  const std::vector<Diagnostic> errors = check_layout(l, m, gpus, t);
  REQUIRE_MESSAGE(errors.empty(), format_diagnostics(errors));
  return l;
}

// GPT-3-style model (GELU, 4h MLP, MHA) with the given shape.
inline ModelSpec gpt_like(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab,
                          int64_t seq) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.training.seq_len = seq;
  return m;
}

// A cluster of `nodes` × 8 GPUs with two levels and round numbers.
inline ClusterSpec two_level_cluster(int64_t nodes) {
  ClusterSpec c;
  c.name = "test";
  c.gpu = *find_gpu("H100-SXM-80GB");
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network = {{"nvlink", 8, 400e9, 5e-6, 1.0}, {"ib", 8 * nodes, 50e9, 10e-6, 1.0}};
  return c;
}

}  // namespace meshplan::testing
