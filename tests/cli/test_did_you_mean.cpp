// Did-you-mean on the command line: a misspelled subcommand, flag or choice value is exit 2 with
// the closest name; nothing close suggests nothing; nccl-tests' --op spellings run as the names.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/run_cli.hpp"

namespace {

bool has(const CliRun& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

}  // namespace

TEST_CASE("a misspelled subcommand or flag names the closest one") {
  const CliRun sub = run("simulat --cluster dgx-h100 --model llama-3-8b");
  CHECK(sub.rc == 2);
  CHECK(has(sub, "did you mean 'simulate'?"));
  const CliRun flag = run("simulate --cluster dgx-h100 --model llama-3-8b --stratgy zero3");
  CHECK(flag.rc == 2);
  CHECK(has(flag, "did you mean '--strategy'?"));
  CHECK_FALSE(has(flag, "'zero3'?"));  // the flag's value is not matched against anything
  const CliRun sweep = run("sweep --cluster dgx-h100 --model llama-3-8b --nic-gpbs 100,200");
  CHECK(sweep.rc == 2);
  CHECK(has(sweep, "did you mean '--nic-gbps'?"));
  const CliRun far = run("simulate --cluster dgx-h100 --model llama-3-8b --colour red");
  CHECK(far.rc == 2);
  CHECK_FALSE(has(far, "did you mean"));
}

TEST_CASE("a misspelled choice value names the closest choice") {
  const CliRun r = run("simulate --cluster dgx-h100 --model llama-3-8b --fabric fat-tre");
  CHECK(r.rc == 2);
  CHECK(has(r, "--fabric"));
  CHECK(has(r, "did you mean 'fat-tree'?"));
}

TEST_CASE("collective --op takes nccl-tests' spellings, with the same table as the names") {
  const std::string args = "collective --cluster dgx-h100 --nodes 2 --bytes 1MiB --tier analytic";
  const CliRun name = run(args + " --op all_reduce --json");
  const CliRun spelling = run(args + " --op allreduce --json");
  CHECK(name.rc == 0);
  CHECK(spelling.out == name.out);
  const CliRun typo = run(args + " --op allreduse");
  CHECK(typo.rc == 2);
  CHECK(has(typo, "did you mean 'allreduce'?"));
}
