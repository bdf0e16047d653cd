// Renderings of a validation report: terminal table, Markdown, JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "checks/validation.h"

namespace meshplan {

std::string validation_table(const ValidationReport& r);
std::string validation_markdown(const ValidationReport& r);
nlohmann::ordered_json validation_json(const ValidationReport& r);

}  // namespace meshplan
