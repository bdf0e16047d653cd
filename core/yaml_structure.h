// Whole-document rules every YAML input obeys, checked once when it is parsed: one document
// per file, keys are plain scalars, and no key appears twice in one mapping (yaml-cpp keeps
// duplicates, and lookups would silently take the first).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace meshplan {

struct SourceText;

// Every duplicate or non-scalar key under `root`, in document order. Each shared (aliased)
// collection is visited once, so the work is bounded by the text's size.
std::vector<Diagnostic> yaml_key_errors(const YAML::Node& root, const SourceText& source);

// An error at the start of the second document when `source`'s text holds more than one. Reads
// at most two documents' events (YAML::LoadAll loops forever on some malformed input).
// REQUIRES: the first document parses (YAML::Load accepted the text).
std::vector<Diagnostic> yaml_document_errors(const std::string& text, const SourceText& source);

}  // namespace meshplan
