// The test executables' main: doctest's, plus one rule. A run that selects no test case fails.
// CTest runs each TEST_CASE as `<exe> --test-case=<name>`, and doctest_discover_tests splits the
// names it lists on ';' (a CMake list), so a name with ';' in it became two filters that match
// nothing, and a run of no test case passed. Here such a run names its filter and exits 1.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

int g_cases_started = 0;

// Counts the test cases a run enters; reports nothing.
struct CaseCounter : doctest::IReporter {
  explicit CaseCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_cases_started; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("case_counter", 1, CaseCounter);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --help, --list-test-cases and the like
  if (rc == 0 && g_cases_started == 0) {
    std::fprintf(stderr, "error: no test case matched the filters given (%d arguments)\n",
                 argc - 1);
    for (int i = 1; i < argc; ++i) std::fprintf(stderr, "  %s\n", argv[i]);
    return 1;
  }
  return rc;
}
