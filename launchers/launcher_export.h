// Launcher configurations for a layout (issue 6, DESIGN.md §4): Megatron-LM arguments, a
// DeepSpeed JSON config, NeMo YAML keys and torchtitan command-line overrides. Each launcher is
// a table entry; a layout a launcher cannot express is refused with a diagnostic naming the
// launcher and the layout field, never silently approximated.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/layout.h"
#include "core/model_spec.h"
#include "core/result.h"

namespace meshplan {

enum class Launcher { megatron, deepspeed, nemo, torchtitan };

// "megatron", "deepspeed", "nemo", "torchtitan" (the --format choices), in table order.
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
                                    const TrainingSpec& training, const Layout& layout);

// Per-launcher renderers (launcher_*.cc); export_launcher dispatches through a table of these.
Result<std::string> export_megatron(const ModelSpec& model, const TrainingSpec& training,
                                    const Layout& layout);
Result<std::string> export_deepspeed(const ModelSpec& model, const TrainingSpec& training,
                                     const Layout& layout);
Result<std::string> export_nemo(const ModelSpec& model, const TrainingSpec& training,
                                const Layout& layout);
Result<std::string> export_torchtitan(const ModelSpec& model, const TrainingSpec& training,
                                      const Layout& layout);

// A refusal: field `field` (value `value`) cannot be expressed in `launcher` because `why`.
Diagnostic launcher_refusal(Launcher launcher, const std::string& field, const std::string& value,
                            const std::string& why);
// A refusal of the layout field `key`, with its value as to_string(Layout) writes it.
// REQUIRES: `key` names a kLayoutFields entry (core/layout_fields.h).
Diagnostic launcher_refusal(Launcher launcher, const Layout& layout, const char* key,
                            const std::string& why);

}  // namespace meshplan
