// Text, JSON and Markdown for `meshplan serve`: pure functions of the evaluated layouts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "serving/load_curve.h"
#include "serving/more_gpus.h"
#include "serving/no_fit.h"
#include "serving/serving_search.h"
#include "serving/slower_steps.h"

namespace meshplan::serving {

struct ServeReport {
  const ServingProblem* problem = nullptr;
  ServingSearchResult result;  // one layout when --layout was given
  bool searched = false;
  int top = 10;                 // rows shown
  std::vector<LoadPoint> load;  // the best layout against load (empty: not asked)
  // Where the search met no SLO on the GPUs given: the searches on more (more_gpus.h).
  std::optional<MoreGpus> more_gpus;
  // The best layout with every step a fraction longer (slower_steps.h; empty: not asked).
  std::optional<SlowerSteps> slower;
  // The price of one GPU-hour in USD (--gpu-hour-cost; 0: none): each row's cost per million
  // output tokens (token_cost.h).
  double gpu_hour_cost_usd = 0;
  // Where a search found no layout that fits: the nearest and what would make one fit
  // (no_fit.h; empty: not asked, or some layout fits).
  std::optional<NoFit> no_fit;
};

std::string serve_table(const ServeReport& r);
// "per GPU of 79.6 GiB: weights … GiB short": where `f`'s nearest layout's memory goes, and how
// far one request's KV cache is from fitting in what the engine's rule leaves it.
std::string memory_short_text(const ServingProblem& p, const NoFit& f);
std::string serve_markdown(const ServeReport& r);
nlohmann::ordered_json serve_json(const ServeReport& r);

// JSON of one evaluated layout: layout, throughput, latencies, memory, step times, flags.
// With a GPU-hour price (USD; 0: none), also its cost per million output tokens
// (token_cost.h).
nlohmann::ordered_json estimate_json(const ServingProblem& p, const ServingEstimate& e,
                                     double gpu_hour_cost_usd = 0);

}  // namespace meshplan::serving
