// libFuzzer target: core/yaml_structure.h's may_hold_two_documents against yaml-cpp itself.
// Wherever the shortcut answers that the text holds one document at most, yaml-cpp's parser,
// having read the first document without error, must find no second one and raise no error
// after it: else yaml_document_errors would skip an error the second parse reports. Seeds: the
// shipped YAML and the inputs that found each gap of the shortcut (fuzz/corpus/yaml_documents).
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <sstream>

#include "core/yaml_structure.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = meshplan::fuzz::as_text(data, size);
  if (meshplan::may_hold_two_documents(text)) return 0;
  std::istringstream in(text);
  YAML::Parser parser(in);
  meshplan::YamlDocumentStarts events;
  try {
    if (!parser.HandleNextDocument(events)) return 0;
  } catch (const YAML::Exception&) {
    return 0;  // a malformed first document: YAML::Load refuses the text before the check
  }
  try {
    if (parser.HandleNextDocument(events)) std::abort();  // a second document the shortcut missed
  } catch (const YAML::Exception&) {
    std::abort();  // an error after the first document the shortcut would hide
  }
  return 0;
}
