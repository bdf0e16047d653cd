#include "launchers/launcher_export.h"

#include <fmt/format.h>

#include <cassert>

#include "core/layout_fields.h"

namespace meshplan {
namespace {

using Rules = void (*)(Refusals&, const ModelSpec&, const TrainingSpec&, const Layout&);
using Renderer = std::string (*)(const ModelSpec&, const TrainingSpec&, const Layout&);

struct LauncherEntry {
  Launcher launcher;
  const char* name;   // --format value
  const char* title;  // in messages and report headings
  Rules rules;
  Renderer render;
};

// Export formats, in the order --help and the report list them.
const LauncherEntry kLaunchers[] = {
    {Launcher::megatron, "megatron", "Megatron-LM", megatron_rules, render_megatron},
    {Launcher::deepspeed, "deepspeed", "DeepSpeed", deepspeed_rules, render_deepspeed},
    {Launcher::nemo, "nemo", "NeMo", nemo_rules, render_nemo},
    {Launcher::nemo2, "nemo2", "NeMo 2", nemo2_rules, render_nemo2},
    {Launcher::torchtitan, "torchtitan", "torchtitan", torchtitan_rules, render_torchtitan},
    {Launcher::torchtitan_toml, "torchtitan-toml", "torchtitan", torchtitan_rules,
     render_torchtitan_toml},
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
  const LauncherEntry& e = entry(launcher);
  Refusals refused(launcher, layout, /*with_messages=*/true);
  e.rules(refused, model, training, layout);
  if (refused.any()) return refused.take();
  return e.render(model, training, layout);
}

const char* launcher_refuses(Launcher launcher, const ModelSpec& model,
                             const TrainingSpec& training, const Layout& layout) {
  Refusals refused(launcher, layout, /*with_messages=*/false);
  entry(launcher).rules(refused, model, training, layout);
  return refused.first();
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
