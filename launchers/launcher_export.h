// Launcher configurations for a layout (issue 6, DESIGN.md §4): Megatron-LM arguments, a
// DeepSpeed JSON config, NeMo YAML keys and torchtitan command-line overrides. Each launcher is
// a table entry; a layout a launcher cannot express is refused with a diagnostic naming the
// launcher and the layout field, never silently approximated.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/job_settings.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "core/result.h"
#include "launchers/refusals.h"

namespace meshplan {

// "megatron", "deepspeed", "nemo", "nemo2", "torchtitan", "torchtitan-toml" (the --format
// choices), in table order.
const std::vector<std::string>& launcher_names();
std::optional<Launcher> parse_launcher(const std::string& name);
// Display name: "Megatron-LM", "DeepSpeed", "NeMo", "torchtitan".
const char* launcher_title(Launcher launcher);

// What the launcher needs for `layout`, as text ready to paste: argument lines for Megatron-LM
// and torchtitan, JSON for DeepSpeed, YAML for NeMo. Deterministic; ends with a newline.
// REQUIRES: check_layout(layout, model, gpus, training) returned no errors (dp resolved).
// Errors: one diagnostic per field the launcher cannot express; its location is "--layout",
// its field the layout key, its rule names the launcher.
Result<std::string> export_launcher(Launcher launcher, const ModelSpec& model,
                                    const TrainingSpec& training, const Layout& layout,
                                    const JobSettings& job = {});

// The key of the first field (of the layout, the model or the training) that `launcher` refuses,
// by the same rules as export_launcher, or nullptr when it exports the layout. Builds no message:
// the search asks it of every layout that fits (`plan --framework X`).
// REQUIRES: as export_launcher.
const char* launcher_refuses(Launcher launcher, const ModelSpec& model,
                             const TrainingSpec& training, const Layout& layout,
                             const JobSettings& job = {});

// launcher_refuses(launcher, model, training, layout with zero = z) into out[z] for each ZeRO
// stage z that `zeros` marks (out's other entries are left as they are); stages whose answers
// the rules cannot tell apart are asked once. The search asks it per layout that fits at some
// stage. `layout.zero` is set to each stage asked, then restored (no copy of the layout).
// REQUIRES: as export_launcher, for each marked stage.
void launcher_refuses_by_zero(Launcher launcher, const ModelSpec& model,
                              const TrainingSpec& training, Layout& layout,
                              const std::array<bool, 4>& zeros, std::array<const char*, 4>& out,
                              const JobSettings& job = {});

// Per launcher (launcher_*.cc), the rules: every field it cannot express, into `out`; and the
// renderer, for a layout the rules let through. export_launcher runs both through a table.
void megatron_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                    const Layout& layout, const JobSettings& job);
void deepspeed_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                     const Layout& layout, const JobSettings& job);
void nemo_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                const Layout& layout, const JobSettings& job);
void nemo2_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                 const Layout& layout, const JobSettings& job);
void torchtitan_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                      const Layout& layout, const JobSettings& job);
std::string render_megatron(const ModelSpec& model, const TrainingSpec& training,
                            const Layout& layout, const JobSettings& job);
std::string render_deepspeed(const ModelSpec& model, const TrainingSpec& training,
                             const Layout& layout, const JobSettings& job);
std::string render_nemo(const ModelSpec& model, const TrainingSpec& training, const Layout& layout,
                        const JobSettings& job);
std::string render_nemo2(const ModelSpec& model, const TrainingSpec& training, const Layout& layout,
                         const JobSettings& job);
std::string render_torchtitan(const ModelSpec& model, const TrainingSpec& training,
                              const Layout& layout, const JobSettings& job);
std::string render_torchtitan_toml(const ModelSpec& model, const TrainingSpec& training,
                                   const Layout& layout, const JobSettings& job);

}  // namespace meshplan
