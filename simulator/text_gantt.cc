#include "simulator/text_gantt.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>

#include "simulator/time_columns.h"

namespace meshplan::sim {
namespace {

constexpr std::array<char, 5> kLetters = {'F', 'B', 'W', 'R', 'O'};

int letter_index(OpKind k) {
  switch (k) {
    case OpKind::forward:
      return 0;
    case OpKind::backward:
    case OpKind::backward_input:
      return 1;
    case OpKind::backward_weight:
      return 2;
    case OpKind::recompute:
      return 3;
    case OpKind::optimizer:
      return 4;
    default:
      return -1;
  }
}

using Coverage = ColumnCoverage<kLetters.size()>;  // per column, per letter

std::string render_row(const Coverage& row, double dt) {
  std::string out;
  for (const auto& c : row) {
    const auto best = std::max_element(c.begin(), c.end());
    double busy = 0;
    for (double v : c) busy += v;
    out += busy >= dt / 2 ? kLetters[best - c.begin()] : '.';
  }
  return out;
}

}  // namespace

std::string text_gantt(const OperationGraph& graph, const Timeline& timeline, int stages,
                       int width) {
  assert(width >= 1);
  const double step = timeline.makespan_s;
  const double dt = step > 0 ? step / width : 1.0;
  std::vector<Coverage> rows(stages, Coverage(width, std::array<double, kLetters.size()>{}));
  for (OpId id = 0; id < graph.op_count(); ++id) {
    const Operation& op = graph.op(id);
    const int letter = letter_index(op.tags.kind);
    const int stage = graph.stream(op.stream).stage;
    if (letter < 0 || stage < 0 || timeline.end_s[id] <= timeline.start_s[id]) continue;
    assert(stage < stages);
    cover(rows[stage], dt, timeline.start_s[id], timeline.end_s[id], letter);
  }
  std::string out = fmt::format(
      "step {:.3f} ms, {:.3f} ms per column; F forward, B backward, W weight gradient, "
      "R recompute, O optimizer, . idle\n",
      step * 1e3, dt * 1e3);
  for (int s = 0; s < stages; ++s)
    out += fmt::format("stage {:>2} |{}|\n", s, render_row(rows[s], dt));
  return out;
}

}  // namespace meshplan::sim
