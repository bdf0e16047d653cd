#include "serving/pool_replay_memo.h"

#include "serving/disaggregated_replay.h"

namespace meshplan::serving {
namespace {

// Whether a pool of `size` workers that used `used` of them replays as a pool of `asked`.
bool pool_covers(int64_t size, int64_t used, int64_t asked) {
  return used < size ? asked >= used : asked == size;
}

}  // namespace

bool PoolReplayMemo::covers(const Kept& k, int64_t prefill, int64_t decode) {
  return pool_covers(k.prefill_workers, k.outcome.replay.prefill_workers_used, prefill) &&
         pool_covers(k.decode_workers, k.outcome.replay.decode_workers_used, decode);
}

PoolReplayMemo::Key PoolReplayMemo::key(const Shape& s) {
  const ServingLayout& l = s.layout;
  return {l.tp,
          l.pp,
          l.ep,
          l.max_batch,
          l.attention_dp,
          l.prefill_tp,
          s.load,
          s.transfer_latency_s,
          s.transfer_s_per_token};
}

std::optional<PoolReplayMemo::Outcome> PoolReplayMemo::find(const Shape& shape) const {
  const ServingLayout& layout = shape.layout;
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kept_.find(key(shape));
  if (it == kept_.end()) return std::nullopt;
  for (const Kept& k : it->second) {
    if (!covers(k, layout.prefill_replicas, layout.replicas)) continue;
    ++hits_;
    Outcome found = k.outcome;
    set_pool_busy(found.replay, layout.prefill_replicas, layout.replicas);
    return found;
  }
  return std::nullopt;
}

void PoolReplayMemo::keep(const Shape& shape, Outcome outcome) {
  const ServingLayout& layout = shape.layout;
  if (outcome.replay.prefill_workers_used >= layout.prefill_replicas &&
      outcome.replay.decode_workers_used >= layout.replicas)
    return;  // every worker took part: the replay of these sizes alone
  const std::lock_guard<std::mutex> lock(mutex_);
  kept_[key(shape)].push_back(Kept{layout.prefill_replicas, layout.replicas, std::move(outcome)});
}

int64_t PoolReplayMemo::hits() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace meshplan::serving
