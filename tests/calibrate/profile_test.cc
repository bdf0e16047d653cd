// core/profile.cc: YAML round trip, units at the edge, errors with positions.
#include "core/profile.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

namespace meshplan {
namespace {

CalibrationProfile awkward_profile() {
  CalibrationProfile p;
  p.name = "test-profile";
  p.provenance.how = "measured";
  p.provenance.gpu = "NVIDIA H100 80GB HBM3";
  p.provenance.gpu_count = 8;
  p.provenance.nodes = 1;
  p.provenance.driver = "550.54.15";
  p.provenance.cuda = "12.4";
  p.provenance.nccl_env = {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple,LL128"}};
  p.provenance.command = "meshplan calibrate --out \"x: y.yaml\"";
  p.provenance.sources = {"nccl-tests: all_reduce_perf.txt", "true"};
  GemmTable bf16;
  bf16.dtype = "bf16";
  bf16.max_efficiency = 0.8004044489383215;
  bf16.sustained_flops_per_s = 676.4e12 / 3;
  bf16.samples.push_back({8192, 8192, 8192, 7.9154e14 / 3.0, 1.0 / 3.0 * 1e14, 1.234567e-3, "ok"});
  bf16.samples.push_back({16, 16, 16, 0, 0, 0, "failed: CUBLAS_STATUS_NOT_SUPPORTED"});
  p.gemm["bf16"] = bf16;
  p.hbm_bytes_per_s = 2.9e12 + 0.1;
  p.attention_efficiency = 0.1 + 0.2;
  p.intra_node_bus_efficiency = 0.8;
  CollectiveFit c;
  c.collective = "all_reduce";
  c.level = "nvlink";
  c.group_size = 8;
  c.latency_s = 1.5e-5 / 7;
  c.busbw_bytes_per_s = 3.6e11 / 9;
  c.half_peak_bytes = 5.4e6 / 3;
  c.source = "measured";
  c.samples = {{8, 2.1e-5, 8 / 2.1e-5 * 1.75, "ok"},
               {8589934592, 0.0401, 8589934592 / 0.0401 * 1.75, "ok"},
               {16, 0, 0, "failed: out of memory"}};
  p.collectives.push_back(c);
  p.peer_all_reduce = {6.7e-6 / 3, 402e9 / 7, 8388608, "vLLM: \"ca_1stage\""};
  p.notes = {"cpu backend: no collectives measured", "# not a comment"};
  return p;
}

TEST_CASE("a profile renders, parses back, and renders to the same text, bit-exact doubles") {
  CalibrationProfile p = awkward_profile();
  std::string text = render_profile_yaml(p);
  auto back = parse_profile_yaml(text, "test.yaml");
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : format_diagnostics(back.errors())));
  CHECK(render_profile_yaml(*back) == text);
  const CalibrationProfile& q = *back;
  CHECK(q.name == "test-profile");
  CHECK(q.provenance.command == p.provenance.command);
  CHECK(q.provenance.sources == p.provenance.sources);
  CHECK(q.provenance.nccl_env == p.provenance.nccl_env);
  CHECK(q.gemm.at("bf16").max_efficiency == p.gemm.at("bf16").max_efficiency);
  CHECK(q.gemm.at("bf16").sustained_flops_per_s == p.gemm.at("bf16").sustained_flops_per_s);
  CHECK(q.gemm.at("bf16").samples[0].flops_per_s == p.gemm.at("bf16").samples[0].flops_per_s);
  CHECK(q.gemm.at("bf16").samples[0].heuristic_flops_per_s ==
        p.gemm.at("bf16").samples[0].heuristic_flops_per_s);
  CHECK(q.gemm.at("bf16").samples[0].p95_time_s == p.gemm.at("bf16").samples[0].p95_time_s);
  CHECK(q.gemm.at("bf16").samples[1].status == "failed: CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(q.hbm_bytes_per_s == p.hbm_bytes_per_s);
  CHECK(q.attention_efficiency == p.attention_efficiency);
  REQUIRE(q.collectives.size() == 1);
  CHECK(q.collectives[0].latency_s == p.collectives[0].latency_s);
  CHECK(q.collectives[0].busbw_bytes_per_s == p.collectives[0].busbw_bytes_per_s);
  CHECK(q.collectives[0].half_peak_bytes == p.collectives[0].half_peak_bytes);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(q.collectives[0].samples[i].bytes == p.collectives[0].samples[i].bytes);
    CHECK(q.collectives[0].samples[i].time_s == p.collectives[0].samples[i].time_s);
    CHECK(q.collectives[0].samples[i].busbw_bytes_per_s ==
          p.collectives[0].samples[i].busbw_bytes_per_s);
    CHECK(q.collectives[0].samples[i].status == p.collectives[0].samples[i].status);
  }
  CHECK(q.peer_all_reduce.latency_s == p.peer_all_reduce.latency_s);
  CHECK(q.peer_all_reduce.peer_read_bytes_per_s == p.peer_all_reduce.peer_read_bytes_per_s);
  CHECK(q.peer_all_reduce.max_bytes == 8388608);
  CHECK(q.peer_all_reduce.source == p.peer_all_reduce.source);
  CHECK(q.notes == p.notes);
}

TEST_CASE("keys carry human units: tflops, GBps and microseconds") {
  CalibrationProfile p;
  p.name = "units";
  GemmTable t;
  t.dtype = "bf16";
  t.max_efficiency = 0.8;
  t.samples.push_back({4096, 4096, 4096, 7.92e14, 0, 2e-3, "ok"});
  p.gemm["bf16"] = t;
  p.hbm_bytes_per_s = 3.35e12;
  CollectiveFit c;
  c.collective = "all_gather";
  c.group_size = 2;
  c.latency_s = 6e-6;
  c.busbw_bytes_per_s = 3.6e11;
  p.collectives.push_back(c);
  std::string text = render_profile_yaml(p);
  // Every sample ok: one table, a heuristic rate not measured left empty.
  CHECK(text.find("    samples_table: |\n      m,n,k,tflops,heuristic_tflops,p95_time_us\n"
                  "      4096,4096,4096,792,,2000\n") != std::string::npos);
  CHECK(text.find("hbm_GBps: 3350\n") != std::string::npos);
  CHECK(text.find("latency_us: 6\n") != std::string::npos);
  CHECK(text.find("busbw_GBps: 360\n") != std::string::npos);
  CHECK(text.rfind("name: units\nprovenance:\n  how: published\n", 0) == 0);
}

TEST_CASE("a hand-written profile converts units exactly as decimal text") {
  auto r = parse_profile_yaml(
      "provenance: {how: published}\n"
      "gemm:\n  fp8: {max_efficiency: 0.75, samples: [{m: 1, n: 2, k: 3, tflops: 1.5e3}]}\n"
      "hbm_GBps: 0.25\n"
      "collectives:\n  - {collective: send_recv, group_size: 2, latency_us: 7.5, busbw_GBps: 46}\n",
      "profiles/hand.yaml");
  REQUIRE(r.ok());
  CHECK(r->name == "hand");  // file stem when the name is left out
  CHECK(r->gemm.at("fp8").samples[0].flops_per_s == 1.5e15);
  CHECK(r->hbm_bytes_per_s == 2.5e8);
  CHECK(r->collectives[0].latency_s == 7.5e-6);
  CHECK(r->collectives[0].busbw_bytes_per_s == 4.6e10);
}

TEST_CASE("profile errors name file, line and column") {
  auto r = parse_profile_yaml("provenance:\n  how: measured\nhbm_GBps: -3\n", "bad.yaml");
  REQUIRE(!r.ok());
  CHECK(r.errors()[0].where.line == 3);
  CHECK(r.errors()[0].rule ==
        "must be a number greater than 0 (leave the field out when not measured)");

  auto unknown = parse_profile_yaml("provenance: {how: measured}\nhbm_gbps: 3\n", "bad.yaml");
  REQUIRE(!unknown.ok());
  CHECK(unknown.errors()[0].where.line == 2);
  CHECK(format_diagnostics(unknown.errors()).find("hbm_GBps") != std::string::npos);

  auto coll = parse_profile_yaml(
      "provenance: {how: measured}\ncollectives:\n  - {collective: allreduce, group_size: 8,"
      " latency_us: 1, busbw_GBps: 1}\n",
      "bad.yaml");
  REQUIRE(!coll.ok());
  CHECK(coll.errors()[0].where.line == 3);
  CHECK(format_diagnostics(coll.errors()).find("all_reduce") != std::string::npos);

  auto missing = parse_profile_yaml("gemm: {}\n", "bad.yaml");
  REQUIRE(!missing.ok());
  CHECK(missing.errors()[0].rule == "is required but missing");
}

std::string profile_errors(const std::string& text) {
  auto r = parse_profile_yaml("provenance: {how: measured}\n" + text, "p.yaml");
  return r.ok() ? "ok" : format_diagnostics(r.errors());
}

const std::string kFit =
    "collectives:\n  - {collective: all_reduce, group_size: 8, latency_us: 1, busbw_GBps: ";

TEST_CASE("a GEMM samples_table reads as the same samples as the list, rates exactly") {
  const std::string list =
      "gemm:\n  bf16:\n    max_efficiency: 0.8\n    samples:\n"
      "      - {m: 2048, n: 1536, k: 7168, tflops: 710.6838973697001, heuristic_tflops: 662.25, "
      "p95_time_us: 63.616}\n"
      "      - {m: 16, n: 32, k: 64, tflops: 1.5}\n";
  const std::string table =
      "gemm:\n  bf16:\n    max_efficiency: 0.8\n    samples_table: |\n"
      "      m,n,k,tflops,heuristic_tflops,p95_time_us\n"
      "      2048,1536,7168,710.6838973697001,662.25,63.616\n"
      "\n"
      "      16,32,64,1.5,,\n";
  auto a = parse_profile_yaml("provenance: {how: measured}\n" + list, "list/p.yaml");
  auto b = parse_profile_yaml("provenance: {how: measured}\n" + table, "table/p.yaml");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const std::vector<GemmSample>& x = a->gemm.at("bf16").samples;
  const std::vector<GemmSample>& y = b->gemm.at("bf16").samples;
  REQUIRE(y.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(x[i].m == y[i].m);
    CHECK(x[i].n == y[i].n);
    CHECK(x[i].k == y[i].k);
    CHECK(x[i].flops_per_s == y[i].flops_per_s);  // bit for bit: the same decimal conversion
    CHECK(x[i].heuristic_flops_per_s == y[i].heuristic_flops_per_s);
    CHECK(x[i].p95_time_s == y[i].p95_time_s);
  }
  CHECK(y[0].flops_per_s == 710.6838973697001e12);
  CHECK(y[1].heuristic_flops_per_s == 0);  // empty: not measured
  // Rendered back, the table is what the list becomes.
  CHECK(render_profile_yaml(*a) == render_profile_yaml(*b));
}

TEST_CASE("a GEMM samples_table's errors point at the row and field") {
  const std::string head =
      "gemm:\n  bf16:\n    max_efficiency: 0.8\n    samples_table: |\n"
      "      m,n,k,tflops,heuristic_tflops,p95_time_us\n";
  CHECK(profile_errors(head + "      2048,1536,7168,abc,,\n") ==
        "p.yaml:7:22: error: field 'gemm.bf16.samples_table[0].tflops' = 'abc': must be a number "
        "greater than 0 (leave the field out when not measured)\n"
        "        2048,1536,7168,abc,,\n"
        "                       ^\n");
  CHECK(profile_errors(head + "      1,2,3,4,,\n      1,2,3\n") ==
        "p.yaml:8:7: error: field 'gemm.bf16.samples_table[1]' = '1,2,3': must have 6 "
        "comma-separated fields (m,n,k,tflops,heuristic_tflops,p95_time_us), not 3\n"
        "        1,2,3\n"
        "        ^\n");
  CHECK(
      profile_errors(head + "      0,2,3,4,,\n")
          .find("p.yaml:7:7: error: field 'gemm.bf16.samples_table[0].m' = '0': must be an integer "
                "between 1 and 1099511627776") == 0);
  CHECK(profile_errors("gemm:\n  bf16:\n    max_efficiency: 0.8\n    samples_table: |\n"
                       "      m,n,k,tflops\n      1,2,3,4\n")
            .find("p.yaml:6:7: error: field 'gemm.bf16.samples_table' = 'm,n,k,tflops': must "
                  "start with the header line m,n,k,tflops,heuristic_tflops,p95_time_us") == 0);
  CHECK(profile_errors("gemm:\n  bf16:\n    max_efficiency: 0.8\n    samples: []\n" +
                       head.substr(head.find("    samples_table")) + "      1,2,3,4,,\n")
            .find("give samples or samples_table, not both") != std::string::npos);
}

TEST_CASE("an attention_table reads as the same samples as the list, its source with commas") {
  const std::string list =
      "attention:\n"
      "  - {kernel: cudnn, head_dim: 128, seq_len: 4096, causal: false, fwd_tflops: 518.25, "
      "bwd_tflops: 450, source: \"FA3 paper, Figure 5 (2.3)\"}\n"
      "  - {kernel: trtllm-fp8kv, head_dim: 64, seq_len: 512, causal: true, fwd_bwd_tflops: 0.5}\n";
  const std::string table =
      "attention_table: |\n"
      "  kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,fwd_bwd_tflops,source\n"
      "  cudnn,128,4096,false,518.25,450,,FA3 paper, Figure 5 (2.3)\n"
      "\n"
      "  trtllm-fp8kv,64,512,true,,,0.5,\n";
  auto a = parse_profile_yaml("provenance: {how: published}\n" + list, "list/p.yaml");
  auto b = parse_profile_yaml("provenance: {how: published}\n" + table, "table/p.yaml");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(b->attention.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const AttentionSample &x = a->attention[i], &y = b->attention[i];
    CHECK(x.kernel == y.kernel);
    CHECK(x.head_dim == y.head_dim);
    CHECK(x.seq_len == y.seq_len);
    CHECK(x.causal == y.causal);
    CHECK(x.fwd_flops_per_s == y.fwd_flops_per_s);  // bit for bit: the same decimal conversion
    CHECK(x.bwd_flops_per_s == y.bwd_flops_per_s);
    CHECK(x.fwd_bwd_flops_per_s == y.fwd_bwd_flops_per_s);
    CHECK(x.source == y.source);
  }
  CHECK(b->attention[0].fwd_flops_per_s == 518.25e12);
  CHECK(b->attention[0].source == "FA3 paper, Figure 5 (2.3)");
  CHECK(b->attention[1].fwd_flops_per_s == 0);  // empty: not given
  CHECK(b->attention[1].source.empty());
  // Rendered back, the table is what the list becomes.
  const std::string text = render_profile_yaml(*a);
  CHECK(text == render_profile_yaml(*b));
  CHECK(text.find("attention_table: |\n"
                  "  kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,fwd_bwd_tflops,source\n"
                  "  cudnn,128,4096,false,518.25,450,,FA3 paper, Figure 5 (2.3)\n"
                  "  trtllm-fp8kv,64,512,true,,,0.5,\n") != std::string::npos);
}

TEST_CASE("a profile's attention samples that no table row can hold are written as a list") {
  CalibrationProfile p;
  p.name = "list";
  p.attention.push_back({"fa3", 128, 4096, true, 5.79e14, 0, 0, "a source\nof two lines"});
  const std::string text = render_profile_yaml(p);
  CHECK(text.find("attention_table") == std::string::npos);
  CHECK(text.find("attention:\n  - {kernel: fa3, head_dim: 128, seq_len: 4096, causal: true, "
                  "fwd_tflops: 579, source: ") != std::string::npos);
  p.attention[0].source = "FA3 paper";
  p.attention[0].kernel = "fa3,v2";
  CHECK(render_profile_yaml(p).find("attention_table") == std::string::npos);
  p.attention[0].kernel = "fa3";
  CHECK(render_profile_yaml(p).find("attention_table: |\n") != std::string::npos);
}

TEST_CASE("an attention_table's errors point at the row and field") {
  const std::string head =
      "attention_table: |\n"
      "  kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,fwd_bwd_tflops,source\n";
  CHECK(profile_errors(head + "  fa3,128,4096,yes,579,,,FA3 paper\n") ==
        "p.yaml:4:16: error: field 'attention_table[0].causal' = 'yes': must be true or false\n"
        "    fa3,128,4096,yes,579,,,FA3 paper\n"
        "                 ^\n");
  CHECK(profile_errors(head + "  fa3,128,4096,true,579,,,\n  fa3,128,0,true,579,,,\n") ==
        "p.yaml:5:11: error: field 'attention_table[1].seq_len' = '0': must be an integer "
        "between 1 and 4294967296\n"
        "    fa3,128,0,true,579,,,\n"
        "            ^\n");
  CHECK(profile_errors(head + "  fa3,128,4096,true,-1,,,\n")
            .find("p.yaml:4:21: error: field 'attention_table[0].fwd_tflops' = '-1': must be a "
                  "number greater than 0") == 0);
  CHECK(profile_errors(head + "  fa3,128,4096,true\n") ==
        "p.yaml:4:3: error: field 'attention_table[0]' = 'fa3,128,4096,true': must have 8 "
        "comma-separated fields (kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,"
        "fwd_bwd_tflops,source), not 4\n"
        "    fa3,128,4096,true\n"
        "    ^\n");
  CHECK(profile_errors(head + "  fa3,128,4096,true,,450,,FA3 paper\n")
            .find("p.yaml:4:3: error: field 'attention_table[0]' = 'fa3,128,4096,true,,450,,FA3 "
                  "paper': needs fwd_tflops or fwd_bwd_tflops greater than 0") == 0);
  CHECK(profile_errors(head + "  ,128,4096,true,579,,,\n")
            .find("p.yaml:4:3: error: field 'attention_table[0].kernel': must not be empty") == 0);
  CHECK(profile_errors("attention_table: |\n  kernel,head_dim\n  fa3,128\n")
            .find("p.yaml:3:3: error: field 'attention_table' = 'kernel,head_dim': must start "
                  "with the header line kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,"
                  "fwd_bwd_tflops,source") == 0);
  CHECK(profile_errors("attention: []\n" + head + "  fa3,128,4096,true,579,,,\n")
            .find("give attention or attention_table, not both") != std::string::npos);
}

TEST_CASE("a collective fit's busbw_GBps of 0 is an error, not a missing value") {
  CHECK(profile_errors(kFit + "0}\n") ==
        "p.yaml:3:72: error: field 'collectives[0].busbw_GBps' = '0': must be a number greater "
        "than 0 (leave the field out when not measured)\n"
        "    - {collective: all_reduce, group_size: 8, latency_us: 1, busbw_GBps: 0}\n"
        "                                                                         ^\n");
}

TEST_CASE("a profile number that underflows to 0 is an error") {
  CHECK(profile_errors(kFit + "1e-9999}\n") ==
        "p.yaml:3:72: error: field 'collectives[0].busbw_GBps' = '1e-9999': is too small to "
        "represent (it rounds to 0)\n"
        "    - {collective: all_reduce, group_size: 8, latency_us: 1, busbw_GBps: 1e-9999}\n"
        "                                                                         ^\n");
}

TEST_CASE("a profile number's sign, zero and exponent read as the decimal written") {
  // A zero where zero is allowed reads +0 whatever its sign; a negative number is refused.
  auto r = parse_profile_yaml(
      "provenance: {how: published}\n"
      "collectives:\n  - {collective: all_reduce, group_size: 8, latency_us: -0.000, "
      "busbw_GBps: +36.0e1, half_peak_bytes: 0}\n",
      "p.yaml");
  REQUIRE(r.ok());
  CHECK(r->collectives[0].latency_s == 0);
  CHECK_FALSE(std::signbit(r->collectives[0].latency_s));
  CHECK(r->collectives[0].busbw_bytes_per_s == 3.6e11);
  CHECK(profile_errors(kFit + "-1}\n").find("= '-1': must be a number greater than 0") !=
        std::string::npos);
  CHECK(profile_errors(kFit + "0.0e5}\n").find("= '0.0e5': must be a number greater than 0") !=
        std::string::npos);
  // The exponent shifted in the text, not a product of doubles: 0.1 TFLOP/s is exactly 1e11.
  auto g = parse_profile_yaml(
      "provenance: {how: published}\n"
      "gemm:\n  bf16: {max_efficiency: 0.8, samples: [{m: 1, n: 1, k: 1, tflops: 0.1}, "
      "{m: 1, n: 1, k: 1, tflops: 7106838973697001e-13}]}\n",
      "p.yaml");
  REQUIRE(g.ok());
  CHECK(g->gemm.at("bf16").samples[0].flops_per_s == 1e11);
  CHECK(g->gemm.at("bf16").samples[1].flops_per_s == 710.6838973697001e12);
  CHECK(profile_errors(kFit + "1e9999}\n").find("must be a finite number") != std::string::npos);
}

TEST_CASE("hbm_GBps: 0 and an efficiency of 0 are errors, not defaults") {
  CHECK(profile_errors("hbm_GBps: 0\n") ==
        "p.yaml:2:11: error: field 'hbm_GBps' = '0': must be a number greater than 0 (leave the "
        "field out when not measured)\n"
        "  hbm_GBps: 0\n"
        "            ^\n");
  CHECK(profile_errors("intra_node_bus_efficiency: 0\n") ==
        "p.yaml:2:28: error: field 'intra_node_bus_efficiency' = '0': must be a number greater "
        "than 0 and at most 1 (leave the field out when not known)\n"
        "  intra_node_bus_efficiency: 0\n"
        "                             ^\n");
}

TEST_CASE("a GEMM table's sustained_tflops of 0 is an error, not 'not measured'") {
  CHECK(profile_errors("gemm:\n  bf16: {max_efficiency: 0.8, sustained_tflops: 0}\n") ==
        "p.yaml:3:49: error: field 'gemm.bf16.sustained_tflops' = '0': must be a number greater "
        "than 0 (leave the field out when not measured)\n"
        "    bf16: {max_efficiency: 0.8, sustained_tflops: 0}\n"
        "                                                  ^\n");
}

TEST_CASE("non-finite profile numbers are refused") {
  CHECK(profile_errors("hbm_GBps: .inf\n") ==
        "p.yaml:2:11: error: field 'hbm_GBps' = '.inf': must be a number greater than 0 (leave "
        "the field out when not measured)\n"
        "  hbm_GBps: .inf\n"
        "            ^\n");
  CHECK(profile_errors("attention_efficiency: .nan\n") ==
        "p.yaml:2:23: error: field 'attention_efficiency' = '.nan': must be a number between 0 "
        "and 1\n"
        "  attention_efficiency: .nan\n"
        "                        ^\n");
}

TEST_CASE("a list used as a key in a profile is an error, not a crash") {
  auto r = parse_profile_yaml("provenance:\n  how: measured\n  nccl_env: {[a]: b}\n", "p.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) ==
        "p.yaml:3:14: error: field 'provenance.nccl_env': keys must be plain names, not lists or "
        "mappings\n"
        "    nccl_env: {[a]: b}\n"
        "               ^\n");
  CHECK(profile_errors("gemm:\n  [bf16]: {max_efficiency: 0.5}\n") ==
        "p.yaml:3:3: error: field 'gemm': keys must be plain names, not lists or mappings\n"
        "    [bf16]: {max_efficiency: 0.5}\n"
        "    ^\n");
}

TEST_CASE("writing a profile over a directory says it is one") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  auto r = write_profile_atomically(CalibrationProfile{}, dir);
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) == dir + ": error: cannot write: it is a directory\n");
}

TEST_CASE("writing a profile below a regular file gives the system's reason") {
  const std::string path = std::string(MESHPLAN_SOURCE_DIR) + "/README.md/p.yaml";
  auto r = write_profile_atomically(CalibrationProfile{}, path);
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) == path + ": error: cannot write: Not a directory\n");
}

TEST_CASE("bus factors follow nccl-tests doc/PERFORMANCE.md") {
  CHECK(bus_factor("all_reduce", 8) == 1.75);
  CHECK(bus_factor("all_gather", 8) == 0.875);
  CHECK(bus_factor("reduce_scatter", 4) == 0.75);
  CHECK(bus_factor("all_to_all", 2) == 0.5);
  CHECK(bus_factor("send_recv", 2) == 1.0);
}

TEST_CASE("write_profile_atomically replaces the file and reports unwritable paths") {
  auto dir = std::filesystem::temp_directory_path() /
             (std::to_string(::getpid()) + "-meshplan_profile_test");
  std::filesystem::create_directories(dir);
  std::string path = (dir / "p.yaml").string();
  CalibrationProfile p = awkward_profile();
  REQUIRE(write_profile_atomically(p, path).ok());
  auto back = load_profile(path);
  REQUIRE(back.ok());
  CHECK(render_profile_yaml(*back) == render_profile_yaml(p));
  auto bad = write_profile_atomically(p, (dir / "no/such/dir/p.yaml").string());
  REQUIRE(!bad.ok());
  CHECK(bad.errors()[0].rule.rfind("cannot write", 0) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the shipped example profile parses") {
  auto r = load_profile(std::string(MESHPLAN_SOURCE_DIR) + "/profiles/example.yaml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  CHECK(r->provenance.how == "published");
  CHECK(!r->collectives.empty());
}

}  // namespace
}  // namespace meshplan
