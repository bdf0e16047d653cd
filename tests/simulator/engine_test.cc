// The discrete-event engine on small hand-built graphs.
#include <doctest/doctest.h>

#include "simulator/event_engine.h"

namespace meshplan::sim {
namespace {

OpTags tag(int mb = -1) { return OpTags{OpKind::other, 0, -1, mb}; }

TEST_CASE("a stream runs its operations one at a time in submission order") {
  OperationGraph g;
  const StreamId s = g.add_stream("compute", 0);
  const OpId a = g.add_op(s, 2.0, tag());
  const OpId b = g.add_op(s, 3.0, tag());
  const OpId c = g.add_op(s, 0.5, tag());
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  CHECK(t->start_s[a] == 0.0);
  CHECK(t->start_s[b] == 2.0);
  CHECK(t->start_s[c] == 5.0);
  CHECK(t->makespan_s == 5.5);
  CHECK(t->events == 3);
  CHECK(t->cause[b] == a);
}

TEST_CASE("an operation starts only after its dependencies on other streams finish") {
  OperationGraph g;
  const StreamId s0 = g.add_stream("a", 0);
  const StreamId s1 = g.add_stream("b", 1);
  const OpId long_op = g.add_op(s0, 4.0, tag());
  const OpId short_op = g.add_op(s1, 1.0, tag());
  const OpId waiter = g.add_op(s1, 1.0, tag());
  g.add_dependency(waiter, long_op);
  g.add_dependency(waiter, short_op);
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  CHECK(t->start_s[short_op] == 0.0);
  CHECK(t->start_s[waiter] == 4.0);
  CHECK(t->cause[waiter] == long_op);
  CHECK(critical_path(*t) == std::vector<OpId>{long_op, waiter});
}

TEST_CASE("equal-time events fire in insertion order") {
  // Three zero-length chains on three streams all end at t = 1; the follower of each starts in
  // the order the events were scheduled, which shows in their causes and in the follower that
  // a shared stream runs first.
  OperationGraph g;
  const StreamId shared = g.add_stream("shared", 0);
  std::vector<OpId> first;
  for (int i = 0; i < 3; ++i) first.push_back(g.add_op(g.add_stream("s", 0), 1.0, tag(i)));
  // Followers are queued on the shared stream in reverse order of their prerequisites.
  const OpId f2 = g.add_op(shared, 0.0, tag(2));
  const OpId f1 = g.add_op(shared, 0.0, tag(1));
  const OpId f0 = g.add_op(shared, 0.0, tag(0));
  g.add_dependency(f2, first[2]);
  g.add_dependency(f1, first[1]);
  g.add_dependency(f0, first[0]);
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  // first[0..2] complete at t = 1 in insertion order 0, 1, 2; f2 (the shared stream's head)
  // becomes ready with the last of them, so its cause is first[2]; f1 and f0 then follow on the
  // stream at the same instant, caused by their stream predecessor.
  CHECK(t->start_s[f2] == 1.0);
  CHECK(t->cause[f2] == first[2]);
  CHECK(t->cause[f1] == f2);
  CHECK(t->cause[f0] == f1);
  CHECK(t->makespan_s == 1.0);
}

TEST_CASE(
    "equal-time ready operations on one stream keep insertion order rather than readiness order") {
  OperationGraph g;
  const StreamId a = g.add_stream("a", 0);
  const StreamId b = g.add_stream("b", 0);
  const OpId x = g.add_op(a, 1.0, tag());
  const OpId y = g.add_op(b, 1.0, tag());
  const StreamId out = g.add_stream("out", 0);
  const OpId second = g.add_op(out, 1.0, tag());  // waits for y
  const OpId third = g.add_op(out, 1.0, tag());   // waits for x
  g.add_dependency(second, y);
  g.add_dependency(third, x);
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  CHECK(t->start_s[second] == 1.0);
  CHECK(t->start_s[third] == 2.0);
}

TEST_CASE("a dependency against a stream's order is reported as a deadlock instead of hanging") {
  OperationGraph g;
  const StreamId s = g.add_stream("compute", 3);
  const OpId first = g.add_op(s, 1.0, tag());
  const OpId second = g.add_op(s, 1.0, tag());
  g.add_dependency(first, second);
  Result<Timeline> t = simulate(g);
  REQUIRE_FALSE(t.ok());
  CHECK(t.errors()[0].rule.find("deadlock: 2 of 2 operations never start") == 0);
  CHECK(t.errors()[0].value == "? on stream 'compute' of stage 3");
}

TEST_CASE("an empty graph simulates to zero time") {
  OperationGraph g;
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  CHECK(t->makespan_s == 0.0);
  CHECK(critical_path(*t).empty());
}

}  // namespace
}  // namespace meshplan::sim
