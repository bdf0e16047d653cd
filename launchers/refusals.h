// What a launcher refuses of a layout, as its rules (launcher_*.cc) find it. One set of rules
// serves two callers: `export`, which wants one diagnostic per refused field, and the search,
// which asks of every layout that fits only whether the launcher runs it, and which field it
// refuses first, so that no message is built (issue 14: `plan --framework X` ranks only layouts
// X's export accepts).
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/layout.h"
#include "core/result.h"

namespace meshplan {

// nemo: NeMo 1 YAML keys; nemo2: NeMo 2 recipe settings. torchtitan_toml: torchtitan's options
// as a TOML job file rather than command-line overrides.
enum class Launcher { megatron, deepspeed, nemo, nemo2, torchtitan, torchtitan_toml };

// A refusal: field `field` (value `value`) cannot be expressed in `launcher` because `why`.
Diagnostic launcher_refusal(Launcher launcher, const std::string& field, const std::string& value,
                            const std::string& why);
// A refusal of the layout field `key`, with its value as to_string(Layout) writes it.
// REQUIRES: `key` names a kLayoutFields entry (core/layout_fields.h).
Diagnostic launcher_refusal(Launcher launcher, const Layout& layout, const char* key,
                            const std::string& why);

class Refusals {
 public:
  // `with_messages`: build a diagnostic per refusal; else only note the first refused field.
  Refusals(Launcher who, const Layout& layout, bool with_messages)
      : who_(who), layout_(layout), with_messages_(with_messages) {}

  // Refuses layout field `key` (a kLayoutFields key, a string literal). `why` is a string or a
  // callable returning one, called only when messages are built.
  template <class Why>
  void field(const char* key, Why&& why) {
    if (!first_) first_ = key;
    if (with_messages_) diagnostics_.push_back(launcher_refusal(who_, layout_, key, text(why)));
  }
  // Refuses a value outside the layout (a model or training field, a string literal); `value`
  // and `why` as `why` above.
  template <class Value, class Why>
  void other(const char* name, Value&& value, Why&& why) {
    if (!first_) first_ = name;
    if (with_messages_)
      diagnostics_.push_back(launcher_refusal(who_, name, text(value), text(why)));
  }

  // The launcher whose rules run (formats of one launcher share its rules).
  Launcher launcher() const { return who_; }
  bool any() const { return first_ != nullptr; }
  // The first refused field's key (a string literal), or nullptr.
  const char* first() const { return first_; }
  std::vector<Diagnostic> take() { return std::move(diagnostics_); }

 private:
  template <class T>
  static std::string text(T&& t) {
    if constexpr (std::is_invocable_v<T>)
      return std::string(t());
    else
      return std::string(std::forward<T>(t));
  }

  Launcher who_;
  const Layout& layout_;
  bool with_messages_;
  const char* first_ = nullptr;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace meshplan
