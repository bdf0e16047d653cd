#include "core/yaml_blocks.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "core/diagnostic.h"
#include "core/yaml_node.h"

using namespace meshplan;

namespace {

// `n` lines "row i" at `indent` spaces.
std::string rows(int n, int indent) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += std::string(static_cast<size_t>(indent), ' ') + "row " + std::to_string(i) + "\n";
  return out;
}

// The block's text as yaml-cpp reads it from the text as written.
std::string yaml_cpp_text(const std::string& text, const std::string& key) {
  return YAML::Load(text)[key].Scalar();
}

}  // namespace

TEST_CASE("a long literal block is lifted with yaml-cpp's text, every line keeping its number") {
  const std::string text = "name: x\ntable: |\n" + rows(3, 2) + "\n" + "     indented more\n" +
                           rows(14, 2) + "\n\n" + "after: 1\n";
  const LiftedText lifted = lift_literal_blocks(text, 16);
  REQUIRE(lifted.blocks.size() == 1);
  CHECK(lifted.blocks[0].line == 1);
  CHECK(lifted.blocks[0].column == 7);
  CHECK(lifted.blocks[0].text == yaml_cpp_text(text, "table"));  // clip: one final line break
  CHECK(lifted.blocks[0].text.substr(0, 20) == "row 0\nrow 1\nrow 2\n\n ");
  // 2 header lines, 19 content lines, 2 blank ones, one after: the same 24 lines.
  CHECK(lifted.yaml == "name: x\ntable: |\n" + std::string(19, '\n') + "\n\nafter: 1\n");
  const YamlNode root = YamlNode::parse(text, "t.yaml");
  CHECK(root.child("table").as_string() == yaml_cpp_text(text, "table"));
  CHECK(root.child("after").location().line == 24);
  CHECK(root.child("table").block_location(3, 0).line == 6);  // the line as written
}

TEST_CASE("a lifted block at the end of a text without a final line break ends without one") {
  std::string text = "table: |\n" + rows(20, 2);
  text.pop_back();
  const LiftedText lifted = lift_literal_blocks(text, 16);
  REQUIRE(lifted.blocks.size() == 1);
  CHECK(lifted.blocks[0].text == yaml_cpp_text(text, "table"));
  CHECK(lifted.blocks[0].text.back() == '9');
}

TEST_CASE("short blocks, other block headers and text with tabs or carriage returns stay put") {
  CHECK(lift_literal_blocks("table: |\n" + rows(15, 2), 16).blocks.empty());
  CHECK(lift_literal_blocks("table: |-\n" + rows(20, 2), 16).blocks.empty());
  CHECK(lift_literal_blocks("table: >\n" + rows(20, 2), 16).blocks.empty());
  CHECK(lift_literal_blocks("table: | # rows\n" + rows(20, 2), 16).blocks.empty());
  CHECK(lift_literal_blocks("- table: |\n" + rows(20, 4), 16).blocks.empty());
  CHECK(lift_literal_blocks("table: |\n" + rows(20, 2) + "  \tx\n", 16).blocks.empty());
  CHECK(lift_literal_blocks("table: |\r\n" + rows(20, 2), 16).blocks.empty());
  // A character YAML does not print (yaml-cpp refuses the text), or bytes that are not UTF-8.
  CHECK(lift_literal_blocks("table: |\n" + rows(20, 2) + "  a\x01b\n", 16).blocks.empty());
  CHECK(lift_literal_blocks("table: |\n" + rows(20, 2) + "  a\xff\n", 16).blocks.empty());
  CHECK(lift_literal_blocks("table: |\n" + rows(20, 2) + "  a\xc2\x85\n", 16).blocks.empty());
  // Printable UTF-8 is lifted, as yaml-cpp reads it.
  const std::string utf8 = "table: |\n" + rows(20, 2) +
                           "  REFERENCE \xc2\xa7"
                           "3, 8\xc3\x97H100\n";
  const LiftedText printable = lift_literal_blocks(utf8, 16);
  REQUIRE(printable.blocks.size() == 1);
  CHECK(printable.blocks[0].text == yaml_cpp_text(utf8, "table"));
  // A line of spaces alone, or one between the key's indentation and the block's: not lifted.
  CHECK(lift_literal_blocks("table: |\n" + rows(10, 4) + "   \n" + rows(10, 4), 16).blocks.empty());
  CHECK(lift_literal_blocks("a:\n  table: |\n" + rows(10, 6) + "   x\n" + rows(10, 6), 16)
            .blocks.empty());
  // Nested under a mapping, ended by a line at the key's indentation.
  const LiftedText nested =
      lift_literal_blocks("gemm:\n  bf16:\n    table: |\n" + rows(20, 6) + "    next: 2\n", 16);
  REQUIRE(nested.blocks.size() == 1);
  CHECK(nested.blocks[0].line == 2);
  CHECK(nested.blocks[0].column == 11);
}

TEST_CASE("a guessed block yaml-cpp does not read as one is read from the text as written") {
  // The header is text inside a quoted scalar: no scalar stands at its `|`.
  const std::string quoted = "a: \"x\n  table: |\n" + rows(20, 4) + "  y\"\nb: 1\n";
  const LiftedText lifted = lift_literal_blocks(quoted, 16);
  REQUIRE(lifted.blocks.size() == 1);
  bool found = true;
  try {
    found = lifted_blocks_found(YAML::Load(lifted.yaml), lifted.blocks);
  } catch (const YAML::Exception&) {
    found = false;
  }
  CHECK_FALSE(found);
  const YamlNode root = YamlNode::parse(quoted, "q.yaml");
  CHECK(root.child("a").as_string() == yaml_cpp_text(quoted, "a"));
  CHECK(root.child("b").as_int(0, 9) == 1);
  // Inside another block's text (a header not lifted): the outer block keeps every line.
  const std::string inner = "outer: |-\n  table: |\n" + rows(20, 4) + "b: 1\n";
  CHECK(YamlNode::parse(inner, "i.yaml").child("outer").as_string() ==
        yaml_cpp_text(inner, "outer"));
}

TEST_CASE("an error inside a lifted block points at the line as written") {
  const std::string text = "provenance: {how: published}\nbad: |\n" + rows(20, 2);
  try {
    YamlNode::parse(text, "p.yaml").expect_only_keys({"provenance"});
    FAIL("an unknown field was accepted");
  } catch (const InputError& e) {
    CHECK(e.diagnostics[0].where.line == 2);
    CHECK(e.diagnostics[0].field == "bad");
  }
  // The duplicate-key rule still sees the lifted text's keys.
  try {
    YamlNode::parse("t: |\n" + rows(20, 2) + "t: 1\n", "d.yaml");
    FAIL("a duplicate key was accepted");
  } catch (const InputError& e) {
    CHECK(e.diagnostics[0].where.line == 22);
    CHECK(e.diagnostics[0].rule.find("is given twice") == 0);
  }
}
