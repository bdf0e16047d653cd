#include "serving/no_fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "serving/engine_preset.h"
#include "serving/serving_search.h"

namespace meshplan::serving {

double request_kv_bytes(const ServingMemory& m) {
  return static_cast<double>(m.tokens_per_request + m.prefix.shared_tokens) * m.kv_bytes_per_token;
}

double signed_budget_bytes(const ServingProblem& p, const ServingMemory& m) {
  return signed_kv_budget_bytes(engine_preset(p.options.engine), memory_fraction(p.options),
                                m.capacity_bytes, m.weight_bytes, m.activation_bytes,
                                m.reserved_bytes);
}

namespace {

// GPUs of one replica as the search forms them (tp a power of two within a node, pp a power of
// two), ascending, within the cluster.
std::vector<int64_t> replica_sizes(const ServingProblem& p) {
  std::vector<int64_t> out;
  for (int64_t tp = 1; tp <= p.cluster.gpus_per_node; tp *= 2)
    for (int64_t pp = 1; pp <= p.model.layers && tp * pp <= p.cluster.gpus(); pp *= 2)
      out.push_back(tp * pp);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The search's candidates of one replica of exactly `gpus` GPUs, at the engine's default batch.
std::vector<ServingLayout> replica_layouts(ServingProblem q, int64_t gpus) {
  q.gpus = gpus;
  q.options.search_disaggregated = false;
  std::vector<ServingLayout> out;
  for (const ServingLayout& l : serving_candidates(q))
    if (l.replicas == 1 && l.max_batch == 0 && l.replica_gpus() == gpus) out.push_back(l);
  return out;
}

// The layout of the fewest GPUs that fits `q` (of those, the one holding the most requests at
// once; the search's order breaks ties), or nullopt where none fits within the cluster.
std::optional<NoFitRemedy> fewest_gpus_fit(const ServingProblem& q) {
  for (int64_t gpus : replica_sizes(q)) {
    std::optional<NoFitRemedy> best;
    for (ServingLayout l : replica_layouts(q, gpus)) {
      const ServingMemory m = resolved_memory(q, l);
      if (m.fits() && (!best || m.max_concurrency > best->max_concurrency))
        best = NoFitRemedy{"", q.options.weights, q.options.kv, l, m.max_concurrency};
    }
    if (best) return best;
  }
  return std::nullopt;
}

// "--weights fp8 --gpus 32": `flag` (may be empty), and --gpus where the remedy's replica does
// not divide the GPUs given.
std::string remedy_flags(const ServingProblem& p, const std::string& flag, int64_t gpus) {
  std::string out = flag;
  if (gpus > p.gpus || p.gpus % gpus != 0)
    out += fmt::format("{}--gpus {}", out.empty() ? "" : " ", gpus);
  return out;
}

// Formats lighter than `p` may search: FP8 on GPUs with FP8 tensor cores, MXFP4 where the
// checkpoint holds its routed experts so, INT4.
std::vector<WeightFormat> other_formats(const ServingProblem& p) {
  std::vector<WeightFormat> out;
  const std::vector<WeightFormat> searched = weight_formats(p);
  auto unsearched = [&](WeightFormat w) {
    return std::find(searched.begin(), searched.end(), w) == searched.end();
  };
  if (p.cluster.gpu.peak_fp8_flops_per_s > 0 && unsearched(WeightFormat::fp8))
    out.push_back(WeightFormat::fp8);
  if (p.model.mxfp4_experts && unsearched(WeightFormat::mxfp4)) out.push_back(WeightFormat::mxfp4);
  if (unsearched(WeightFormat::int4)) out.push_back(WeightFormat::int4);
  return out;
}

// The changes that make a layout fit, fewest GPUs first: more GPUs at the formats searched,
// then other weight formats and an FP8 KV cache where they need fewer.
std::vector<NoFitRemedy> remedies(const ServingProblem& p) {
  std::optional<NoFitRemedy> more;
  for (WeightFormat w : weight_formats(p))
    if (std::optional<NoFitRemedy> f = fewest_gpus_fit(with_weights(p, w)))
      if (!more || f->layout.replica_gpus() < more->layout.replica_gpus()) more = f;
  std::vector<NoFitRemedy> out;
  if (more) {
    more->flags = remedy_flags(p, "", more->layout.replica_gpus());
    out.push_back(*more);
  }
  auto add_if_fewer = [&](std::optional<NoFitRemedy> f, const std::string& flag) {
    if (!f || (more && f->layout.replica_gpus() >= more->layout.replica_gpus())) return;
    f->flags = remedy_flags(p, flag, f->layout.replica_gpus());
    out.push_back(*f);
  };
  for (WeightFormat w : other_formats(p))
    add_if_fewer(fewest_gpus_fit(with_weights(p, w)), std::string("--weights ") + to_string(w));
  if (p.options.kv == KvFormat::bf16 && p.cluster.gpu.peak_fp8_flops_per_s > 0)
    for (WeightFormat w : weight_formats(p)) {
      ServingProblem q = with_weights(p, w);
      q.options.kv = KvFormat::fp8;
      add_if_fewer(fewest_gpus_fit(q), "--kv fp8");
    }
  std::stable_sort(out.begin(), out.end(), [](const NoFitRemedy& a, const NoFitRemedy& b) {
    return a.layout.replica_gpus() < b.layout.replica_gpus();
  });
  return out;
}

// Keeps `l` (memory `m` at weight format `w`) in `f` where it comes nearer to fitting.
void keep_nearer(std::optional<NoFit>& f, const ServingProblem& v, WeightFormat w,
                 const ServingLayout& l, const ServingMemory& m) {
  const double request = request_kv_bytes(m), budget = signed_budget_bytes(v, m);
  if (f && request - budget >= f->short_bytes()) return;
  if (!f) f.emplace();
  f->nearest = l;
  f->weights = w;
  f->memory = m;
  f->request_kv_bytes = request;
  f->signed_budget_bytes = budget;
}

}  // namespace

NoFit layout_shortfall(const ServingProblem& p, const ServingLayout& layout) {
  std::optional<NoFit> out;
  for (WeightFormat w : weight_formats(p)) {
    const ServingProblem v = with_weights(p, w);
    ServingLayout l = layout;
    const ServingMemory m = resolved_memory(v, l);
    keep_nearer(out, v, w, l, m);
  }
  return *out;
}

std::optional<NoFit> explain_no_fit(const ServingProblem& p) {
  std::optional<NoFit> out;
  for (WeightFormat w : weight_formats(p)) {
    const ServingProblem v = with_weights(p, w);
    for (ServingLayout l : serving_candidates(v)) {
      if (l.max_batch != 0 || l.disaggregated()) continue;
      const ServingMemory m = resolved_memory(v, l);
      if (m.fits()) return std::nullopt;
      keep_nearer(out, v, w, l, m);
    }
  }
  if (out) out->remedies = remedies(p);
  return out;
}

}  // namespace meshplan::serving
