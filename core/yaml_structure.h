// Whole-document rules every YAML input obeys, checked once when it is parsed: one document
// per file, keys are plain scalars, and no key appears twice in one mapping (yaml-cpp keeps
// duplicates, and lookups would silently take the first).
#pragma once

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace meshplan {

struct SourceText;

// yaml-cpp parser events that record where each document starts and ignore everything else
// (yaml_document_errors; fuzz/yaml_documents_fuzz.cc).
class YamlDocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Every duplicate or non-scalar key under `root`, in document order. Each shared (aliased)
// collection is visited once, so the work is bounded by the text's size.
std::vector<Diagnostic> yaml_key_errors(const YAML::Node& root, const SourceText& source);

// Whether `text` may hold a second document by yaml-cpp's reading, answered from its lines
// without parsing it: false only where it cannot (a root mapping whose keys all start lines at
// column 0 with plain names, no control character but tabs and line ends: yaml-cpp ends a
// document at a NUL, tests/data/hostile/yaml_cpp_loadall_loops.yaml, and breaks lines at a lone
// carriage return). fuzz/yaml_documents_fuzz.cc holds it to yaml-cpp's own answer.
bool may_hold_two_documents(const std::string& text);

// An error at the start of the second document when `source`'s text holds more than one
// (parsed again only where may_hold_two_documents: a calibrated profile is hundreds of
// kilobytes). Reads at most two documents' events (YAML::LoadAll loops forever on some
// malformed input).
// REQUIRES: the first document parses (YAML::Load accepted the text).
std::vector<Diagnostic> yaml_document_errors(const std::string& text, const SourceText& source);

}  // namespace meshplan
