// Measurement files: strict JSON-lines parsing with file:line in every error; the incremental
// writer appends and fsyncs records that a reader gets back unchanged.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "calibrate/fit/measurements.hpp"
#include "sim/core/error.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;
using namespace zerosim::calib;

namespace {

const std::string kHeader =
    R"({"format": "zerosim-measurements", "version": 1, "provenance": {"gpu_model": "H100-SXM5-80GB"}})";

void expect_bad(const std::string& body, const std::string& file, const std::string& path,
                const std::string& rule_part) {
  Measurements m;
  expect_input_error([&] { parse_measurements_text(kHeader + "\n" + body, "m.jsonl", m); }, file,
                     path, rule_part);
}

}  // namespace

TEST_CASE("a measurement file with every record kind") {
  std::string text =
      kHeader + "\n\n" +
      R"({"kind": "collective", "op": "all_gather", "ranks": 8, "nodes": 1, "tier": "intra_node", "bytes": 1000000, "time_s": 1e-5, "algbw_GBps": 100, "busbw_GBps": 87.5})"
      "\n"
      R"({"kind": "kernel", "name": "quantize_int8", "bytes": 3000, "time_s": 2e-6})"
      "\n"
      R"({"kind": "gemm", "m": 128, "n": 256, "k": 512, "time_s": 1e-5, "dtype": "bf16"})"
      "\n";
  Measurements m;
  parse_measurements_text(text, "m.jsonl", m);
  REQUIRE(m.collectives.size() == 1);
  CHECK(m.collectives[0].where == "m.jsonl:3");
  CHECK(m.collectives[0].busbw_GBps == zerosim::testing::Approx(87.5));
  REQUIRE(m.kernels.size() == 1);
  REQUIRE(m.gemms.size() == 1);
  CHECK(m.gemms[0].flops() == zerosim::testing::Approx(2.0 * 128 * 256 * 512));
  CHECK(m.provenance[0]["gpu_model"] == "H100-SXM5-80GB");
}

TEST_CASE("bad measurement files") {
  Measurements m;
  CHECK_THROWS_AS(parse_measurements_text("", "empty.jsonl", m), InputError);
  expect_input_error(
      [&] {
        parse_measurements_text(R"({"kind": "kernel", "name": "copy", "bytes": 1, "time_s": 1})",
                                "m.jsonl", m);
      },
      "m.jsonl:1", "", "header");
  expect_bad(R"({"kind": "fft"})", "m.jsonl:2", "/kind", "unknown record kind");
  expect_bad(R"({"kind": "kernel", "name": "copy", "bytes": 1, "time_s": 1, "color": 3})",
             "m.jsonl:2", "/color", "unknown key");
  expect_bad(R"({"kind": "kernel", "name": "memcpy", "bytes": 1, "time_s": 1})", "m.jsonl:2",
             "/name", "unknown kernel");
  expect_bad(R"({"kind": "kernel", "name": "copy", "bytes": 0, "time_s": 1})", "m.jsonl:2",
             "/bytes", "at least 1");
  expect_bad(R"({"kind": "kernel", "name": "copy", "bytes": 1, "time_s": 0})", "m.jsonl:2",
             "/time_s", "positive");
  expect_bad(R"({"kind": "collective", "op": "broadcast", "ranks": 8, "bytes": 1, "time_s": 1})",
             "m.jsonl:2", "/op", "unknown collective");
  expect_bad(
      R"({"kind": "collective", "op": "all_gather", "ranks": 8, "nodes": 2, "tier": "intra_node", "bytes": 1, "time_s": 1})",
      "m.jsonl:2", "/tier", "inter_node");
  expect_bad(
      R"({"kind": "collective", "op": "all_gather", "ranks": 2, "nodes": 4, "bytes": 1, "time_s": 1})",
      "m.jsonl:2", "/nodes", "must not exceed ranks");
  expect_bad(
      R"({"kind": "collective", "op": "all_gather", "ranks": 8, "bytes": 1000000, "time_s": 1e-5, "algbw_GBps": 50})",
      "m.jsonl:2", "/algbw_GBps", "bytes/time_s");
  expect_bad(
      R"({"kind": "collective", "op": "all_gather", "ranks": 8, "bytes": 1000000, "time_s": 1e-5, "busbw_GBps": 100})",
      "m.jsonl:2", "/busbw_GBps", "bus factor");
  expect_bad(R"({"kind": "gemm", "m": 0, "n": 1, "k": 1, "time_s": 1})", "m.jsonl:2", "/m",
             "at least 1");
  expect_bad("{not json", "m.jsonl:2", "", "malformed JSON");
  expect_bad(
      R"({"kind": "collective", "op": "all_gather", "ranks": 8, "bytes": 1, "time_s": 1, "nccl_version": "2.x"})",
      "m.jsonl:2", "/nccl_version", "MAJOR.MINOR");
}

TEST_CASE("a collective record's NCCL release is read and written back") {
  Measurements m;
  parse_measurements_text(
      kHeader + "\n" +
          R"({"kind": "collective", "op": "all_reduce", "ranks": 8, "nodes": 2, "bytes": 1, "time_s": 1, "nccl_version": "2.18"})",
      "m.jsonl", m);
  REQUIRE(m.collectives.size() == 1);
  CHECK(m.collectives[0].nccl_version == "2.18");
  CHECK(to_json(m.collectives[0])["nccl_version"] == "2.18");
  CollectiveRecord none = m.collectives[0];
  none.nccl_version.clear();
  CHECK_FALSE(to_json(none).contains("nccl_version"));
}

TEST_CASE("MeasurementWriter appends records a reader gets back") {
  auto path = (std::filesystem::temp_directory_path() /
               ("zerosim_meas_" + std::to_string(::getpid()) + ".jsonl"))
                  .string();
  std::filesystem::remove(path);
  {
    MeasurementWriter w(path, {{"gpu_model", "X"}});
    w.append(to_json(KernelRecord{"copy", 4096, 3e-6, ""}));
  }
  {
    // Re-opening an existing file appends without a second header (an interrupted run resumed).
    MeasurementWriter w(path, {{"gpu_model", "X"}});
    w.append(to_json(GemmRecord{64, 64, 64, 1e-6, "bf16", ""}));
  }
  Measurements m;
  load_measurements(path, m);
  CHECK(m.kernels.size() == 1);
  CHECK(m.kernels[0].time_s == 3e-6);
  CHECK(m.gemms.size() == 1);
  CHECK(m.provenance.size() == 1);
  std::filesystem::remove(path);
  CHECK_THROWS_AS(MeasurementWriter("/nonexistent-dir/x.jsonl", json::object()), InputError);
}
