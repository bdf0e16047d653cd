#include "launchers/launcher_export.h"

#include <fmt/format.h>

#include <cassert>

#include "core/layout_fields.h"

namespace meshplan {
namespace {

using Renderer = Result<std::string> (*)(const ModelSpec&, const TrainingSpec&, const Layout&);

struct LauncherEntry {
  Launcher launcher;
  const char* name;   // --format value
  const char* title;  // in messages and report headings
  Renderer render;
};

// Export formats, in the order --help and the report list them.
const LauncherEntry kLaunchers[] = {
    {Launcher::megatron, "megatron", "Megatron-LM", export_megatron},
    {Launcher::deepspeed, "deepspeed", "DeepSpeed", export_deepspeed},
    {Launcher::nemo, "nemo", "NeMo", export_nemo},
    {Launcher::torchtitan, "torchtitan", "torchtitan", export_torchtitan},
};

const LauncherEntry& entry(Launcher launcher) {
  for (const LauncherEntry& e : kLaunchers)
    if (e.launcher == launcher) return e;
  return kLaunchers[0];
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
                                    const TrainingSpec& training, const Layout& layout) {
  return entry(launcher).render(model, training, layout);
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
