#include "launchers/launcher_export.h"

#include <fmt/format.h>

#include <array>
#include <cassert>

#include "core/layout_fields.h"

namespace meshplan {
namespace {

using Rules = void (*)(Refusals&, const ModelSpec&, const TrainingSpec&, const Layout&,
                       const JobSettings&);
using Renderer = std::string (*)(const ModelSpec&, const TrainingSpec&, const Layout&,
                                 const JobSettings&);

struct LauncherEntry {
  Launcher launcher;
  const char* name;   // --format value
  const char* title;  // in messages and report headings
  Rules rules;
  Renderer render;
  // ZeRO stages the rules do not tell apart share a class (launcher_refuses_by_zero asks one of
  // them): Megatron-core's rules read only zero >= 2, DeepSpeed's zero >= 2 and zero == 3,
  // torchtitan's zero == 1. A test pins each class's stages to the same answers.
  std::array<int, 4> zero_class;
};

// Export formats, in the order --help and the report list them.
const LauncherEntry kLaunchers[] = {
    {Launcher::megatron, "megatron", "Megatron-LM", megatron_rules, render_megatron, {0, 0, 1, 1}},
    {Launcher::deepspeed,
     "deepspeed",
     "DeepSpeed",
     deepspeed_rules,
     render_deepspeed,
     {0, 0, 1, 2}},
    {Launcher::nemo, "nemo", "NeMo", nemo_rules, render_nemo, {0, 0, 1, 1}},
    {Launcher::nemo2, "nemo2", "NeMo 2", nemo2_rules, render_nemo2, {0, 0, 1, 1}},
    {Launcher::torchtitan,
     "torchtitan",
     "torchtitan",
     torchtitan_rules,
     render_torchtitan,
     {0, 1, 0, 0}},
    {Launcher::torchtitan_toml,
     "torchtitan-toml",
     "torchtitan",
     torchtitan_rules,
     render_torchtitan_toml,
     {0, 1, 0, 0}},
};

const LauncherEntry& entry(Launcher launcher) {
  for (const LauncherEntry& e : kLaunchers)
    if (e.launcher == launcher) return e;
  return kLaunchers[0];
}

// What no launcher runs: a recompute count per pipeline stage (Layout::recompute_stage_layers).
// Megatron-LM --recompute-num-layers, NeMo activations_checkpoint_num_layers (Megatron-Core's
// TransformerConfig.recompute_num_layers), DeepSpeed's activation_checkpoint_interval and
// torchtitan's activation_checkpoint options all take one count for every stage. Only NeMo 1's
// legacy transformer (nemo/collections/nlp/modules/common/megatron/transformer.py, without
// mcore_gpt) lowers it stage by stage, by activations_checkpoint_layers_per_pipeline.
void shared_rules(Refusals& out, const Layout& layout) {
  if (!layout.recompute_stage_layers.empty())
    out.field("recompute_layers",
              "it recomputes the same number of layers on every pipeline stage (only NeMo 1's "
              "legacy, non-Megatron-Core model lowers the count per stage: "
              "activations_checkpoint_layers_per_pipeline); use one count");
}

void apply_rules(const LauncherEntry& e, Refusals& out, const ModelSpec& model,
                 const TrainingSpec& training, const Layout& layout, const JobSettings& job) {
  shared_rules(out, layout);
  e.rules(out, model, training, layout, job);
}

}  // namespace

const std::vector<std::string>& launcher_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const LauncherEntry& e : kLaunchers) out.emplace_back(e.name);
    return out;
  }();
  return names;
}

std::optional<Launcher> parse_launcher(const std::string& name) {
  for (const LauncherEntry& e : kLaunchers)
    if (name == e.name) return e.launcher;
  return std::nullopt;
}

const char* launcher_title(Launcher launcher) { return entry(launcher).title; }

Result<std::string> export_launcher(Launcher launcher, const ModelSpec& model,
                                    const TrainingSpec& training, const Layout& layout,
                                    const JobSettings& job) {
  const LauncherEntry& e = entry(launcher);
  Refusals refused(launcher, layout, /*with_messages=*/true);
  apply_rules(e, refused, model, training, layout, job);
  if (refused.any()) return refused.take();
  return e.render(model, training, layout, job);
}

const char* launcher_refuses(Launcher launcher, const ModelSpec& model,
                             const TrainingSpec& training, const Layout& layout,
                             const JobSettings& job) {
  Refusals refused(launcher, layout, /*with_messages=*/false);
  apply_rules(entry(launcher), refused, model, training, layout, job);
  return refused.first();
}

void launcher_refuses_by_zero(Launcher launcher, const ModelSpec& model,
                              const TrainingSpec& training, Layout& layout,
                              const std::array<bool, 4>& zeros, std::array<const char*, 4>& out,
                              const JobSettings& job) {
  const LauncherEntry& e = entry(launcher);
  // Job settings' rules read the ZeRO stage too (FP8 parameters need a sharded optimizer): every
  // stage is asked apart then.
  const bool plain = !job.fp8_params && job.grad_reduce_dtype.empty();
  const std::array<int, 4> classes = plain ? e.zero_class : std::array<int, 4>{0, 1, 2, 3};
  const int own = layout.zero;
  std::array<int, 4> asked = {-1, -1, -1, -1};  // by class: the ZeRO stage whose answer it has
  for (int zero = 0; zero <= 3; ++zero) {
    const auto z = static_cast<size_t>(zero);
    if (!zeros[z]) continue;
    int& known = asked[static_cast<size_t>(classes[z])];
    if (known >= 0) {
      out[z] = out[static_cast<size_t>(known)];
      continue;
    }
    layout.zero = zero;
    out[z] = launcher_refuses(launcher, model, training, layout, job);
    known = zero;
  }
  layout.zero = own;
}

Diagnostic launcher_refusal(Launcher launcher, const std::string& field, const std::string& value,
                            const std::string& why) {
  std::string rule = launcher_title(launcher);
  rule += " cannot express this: ";
  rule += why;
  return Diagnostic{{"--layout", 0, 0, ""}, field, value, rule};
}

Diagnostic launcher_refusal(Launcher launcher, const Layout& layout, const char* key,
                            const std::string& why) {
  const LayoutField* field = find_layout_field(key);
  assert(field);
  return launcher_refusal(launcher, key, field->print(layout), why);
}

}  // namespace meshplan
