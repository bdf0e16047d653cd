// Whether a layout can run this model on these GPUs with this batch (every rule, every
// violation). The rules are Megatron-LM's where it has one.
#include <fmt/format.h>

#include "core/layout.h"

namespace meshplan {
namespace {

class Checker {
 public:
  explicit Checker(std::string origin) : origin_(std::move(origin)) {}
  void require(bool ok, const std::string& field, int64_t value, const std::string& rule) {
    if (!ok) errors.push_back(Diagnostic{{origin_, 0, 0, ""}, field, std::to_string(value), rule});
  }
  std::vector<Diagnostic> errors;

 private:
  std::string origin_;
};

// The degrees multiply to the GPU count; resolves dp when it was left to fill.
void check_gpu_count(Checker& c, Layout& l, int64_t gpus) {
  const int64_t mp = l.tp * l.pp * l.cp;
  if (l.dp == 0) {
    c.require(
        gpus % mp == 0, "tp", l.tp,
        fmt::format("tp·pp·cp = {} must divide the GPU count ({}) so dp can fill it", mp, gpus));
    l.dp = std::max<int64_t>(1, gpus / mp);  // keep checking the other rules
  } else {
    c.require(l.gpus() == gpus, "dp", l.dp,
              fmt::format("dp·tp·pp·cp = {}·{}·{}·{} = {} must equal the GPU count ({})", l.dp,
                          l.tp, l.pp, l.cp, l.gpus(), gpus));
  }
}

// Tensor and expert parallelism split the model's heads, widths and experts evenly.
void check_model_split(Checker& c, const Layout& l, const ModelSpec& m) {
  c.require(m.heads % l.tp == 0, "tp", l.tp, fmt::format("must divide heads ({})", m.heads));
  c.require(m.kv_heads % l.tp == 0 || l.tp % m.kv_heads == 0, "tp", l.tp,
            fmt::format("must divide kv_heads ({}) or be a multiple of it (KV heads are then "
                        "replicated tp/kv_heads times)",
                        m.kv_heads));
  if (m.dense_layers() > 0 && m.ffn_hidden > 0) {
    c.require(m.ffn_hidden % l.tp == 0, "tp", l.tp,
              fmt::format("must divide ffn_hidden ({})", m.ffn_hidden));
  }
  if (m.moe) {
    c.require(m.moe->expert_ffn_hidden % l.tp == 0, "tp", l.tp,
              fmt::format("must divide moe.expert_ffn_hidden ({}) (experts are split by tp)",
                          m.moe->expert_ffn_hidden));
    c.require(m.moe->experts % l.ep == 0, "ep", l.ep,
              fmt::format("must divide moe.experts ({})", m.moe->experts));
    c.require((l.dp * l.cp) % l.ep == 0, "ep", l.ep,
              fmt::format("must divide dp·cp ({}) (expert groups are carved from the data- and "
                          "context-parallel ranks)",
                          l.dp * l.cp));
  } else {
    c.require(l.ep == 1, "ep", l.ep, "must be 1 for a dense model (it has no experts)");
  }
}

// Layers split over pp·vpp chunks, and the schedule's own rules.
void check_pipeline(Checker& c, const Layout& l, const ModelSpec& m) {
  const int64_t chunks = l.pp * l.vpp;
  c.require(l.uneven || m.layers % chunks == 0, "pp", l.pp,
            fmt::format("pp·vpp = {} must divide layers ({}); add uneven=true to let the first "
                        "and last stages hold fewer layers",
                        chunks, m.layers));
  c.require(m.layers >= chunks, "pp", l.pp,
            fmt::format("pp·vpp = {} must not exceed layers ({})", chunks, m.layers));
  if (l.vpp > 1) {
    c.require(l.schedule == Schedule::interleaved, "vpp", l.vpp,
              "vpp > 1 needs schedule=interleaved");
    c.require(l.pp > 1, "vpp", l.vpp, "vpp > 1 needs pp > 1");
  }
  if (l.schedule == Schedule::interleaved) {
    c.require(l.vpp > 1, "vpp", l.vpp, "schedule=interleaved needs vpp ≥ 2");
  }
  const int64_t stage_layers = (m.layers + chunks - 1) / chunks * l.vpp;  // the largest stage
  c.require(l.recompute_layers <= stage_layers, "recompute_layers", l.recompute_layers,
            fmt::format("must not exceed the layers per stage ({})", stage_layers));
}

// The batch splits into micro-batches, and the sequence into CP and SP shards.
void check_batch_and_sequence(Checker& c, const Layout& l, const TrainingSpec& t) {
  const int64_t per_step = l.dp * l.mbs;
  c.require(t.global_batch % per_step == 0, "mbs", l.mbs,
            fmt::format("dp·mbs = {}·{} = {} must divide the global batch ({} sequences)", l.dp,
                        l.mbs, per_step, t.global_batch));
  if (l.schedule == Schedule::interleaved && per_step > 0 && t.global_batch % per_step == 0) {
    const int64_t micro = t.global_batch / per_step;
    c.require(micro % l.pp == 0, "pp", l.pp,
              fmt::format("the interleaved schedule needs the micro-batch count ({}) to be a "
                          "multiple of pp (Megatron-LM)",
                          micro));
  }
  if (l.cp > 1) {
    c.require(t.seq_len % (2 * l.cp) == 0, "cp", l.cp,
              fmt::format("2·cp must divide seq_len ({}) (load-balanced causal context "
                          "parallelism splits each sequence into 2·cp chunks)",
                          t.seq_len));
  }
  if (l.sp && l.tp > 1) {
    c.require((t.seq_len / l.cp) % l.tp == 0, "tp", l.tp,
              fmt::format("must divide the per-rank sequence ({}) under sequence parallelism",
                          t.seq_len / l.cp));
  }
}

}  // namespace

std::vector<Diagnostic> check_layout(Layout& l, const ModelSpec& m, int64_t gpus,
                                     const TrainingSpec& t, const std::string& origin) {
  Checker c(origin);
  check_gpu_count(c, l, gpus);
  check_model_split(c, l, m);
  check_pipeline(c, l, m);
  check_batch_and_sequence(c, l, t);
  return c.errors;
}

}  // namespace meshplan
