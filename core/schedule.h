// Pipeline schedules: the names a layout's `schedule=` takes and how many model chunks each
// puts on a rank (vpp). Their orders, in-flight micro-batches and bubble formulas are a table
// in simulator/pipeline_schedule.h; which rank holds which chunk is core/pipeline_placement.h.
// The simulator knows schedules through this header and never a Layout.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace meshplan {

enum class Schedule {
  gpipe,
  one_f_one_b,
  interleaved,
  zb_h1,
  zb_h2,
  dualpipe,
  dualpipev,
  zb_v,
  zb_interleaved
};

// Chunks (vpp) per pipeline rank a schedule takes.
enum class ScheduleChunks {
  one,          // gpipe, 1f1b, zb-h1, zb-h2, dualpipe
  two_or_more,  // interleaved, zb-interleaved
  exactly_two   // dualpipev, zb-v (V-shaped)
};

struct ScheduleName {
  Schedule schedule;
  const char* name;  // as in --layout schedule=...
  ScheduleChunks chunks;
};
// Every schedule, in enum order.
std::span<const ScheduleName> schedule_names();
const char* to_string(Schedule schedule);
// nullptr for a name no schedule has.
const ScheduleName* find_schedule(std::string_view name);
// Whether `schedule` runs with `vpp` chunks per rank.
bool schedule_takes_vpp(Schedule schedule, int64_t vpp);
// DualPipe and DualPipeV need at least 2·pp micro-batches; DualPipe also an even pp and an even
// micro-batch count (half enter from each end). True for other schedules and pp = 1.
bool dual_pipe_runs(Schedule schedule, int64_t pp, int64_t micro_batches);

// What a pipeline's shape is made of: stages, chunks per stage and the schedule.
struct PipelineShape {
  int64_t pp = 1, vpp = 1;
  Schedule schedule = Schedule::one_f_one_b;
};

}  // namespace meshplan
