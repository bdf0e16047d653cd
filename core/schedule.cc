#include "core/schedule.h"

namespace meshplan {
namespace {

constexpr ScheduleName kSchedules[] = {
    {Schedule::gpipe, "gpipe", ScheduleChunks::one},
    {Schedule::one_f_one_b, "1f1b", ScheduleChunks::one},
    {Schedule::interleaved, "interleaved", ScheduleChunks::two_or_more},
    {Schedule::zb_h1, "zb-h1", ScheduleChunks::one},
    {Schedule::zb_h2, "zb-h2", ScheduleChunks::one},
    {Schedule::dualpipe, "dualpipe", ScheduleChunks::one},
    {Schedule::dualpipev, "dualpipev", ScheduleChunks::exactly_two},
    {Schedule::zb_v, "zb-v", ScheduleChunks::exactly_two},
    {Schedule::zb_interleaved, "zb-interleaved", ScheduleChunks::two_or_more},
};

const ScheduleName& entry(Schedule schedule) {
  return kSchedules[static_cast<size_t>(schedule)];  // enum order
}

}  // namespace

std::span<const ScheduleName> schedule_names() { return kSchedules; }

const char* to_string(Schedule schedule) { return entry(schedule).name; }

const ScheduleName* find_schedule(std::string_view name) {
  for (const ScheduleName& s : kSchedules)
    if (name == s.name) return &s;
  return nullptr;
}

bool schedule_takes_vpp(Schedule schedule, int64_t vpp) {
  switch (entry(schedule).chunks) {
    case ScheduleChunks::one:
      return vpp == 1;
    case ScheduleChunks::two_or_more:
      return vpp >= 2;
    case ScheduleChunks::exactly_two:
      return vpp == 2;
  }
  return false;
}

bool dual_pipe_runs(Schedule schedule, int64_t pp, int64_t micro_batches) {
  const bool dual = schedule == Schedule::dualpipe;
  if ((!dual && schedule != Schedule::dualpipev) || pp == 1) return true;
  return micro_batches >= 2 * pp && (!dual || (pp % 2 == 0 && micro_batches % 2 == 0));
}

}  // namespace meshplan
