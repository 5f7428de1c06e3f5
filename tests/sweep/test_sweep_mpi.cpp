// `zerosim sweep` under MPI: `mpirun -np 2` gives the bytes of a single process and leaves no
// partial files. Skipped (CTest "Skipped", exit 77) where mpirun is missing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/files.hpp"
#include "tests/support/run_cli.hpp"
#include "tests/support/skip.hpp"
#include "tests/sweep/sweep_cli_fixture.hpp"

namespace fs = std::filesystem;

TEST_CASE("mpirun -np 2 output equals single-process output") {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    zerosim::testing::skip_executable("mpirun not found (install openmpi-bin)");
  fs::path d = temp_dir("sweep_mpi");
  CliRun one = run(kSweep + " --threads 1 --out " + (d / "one.json").string() + " --csv " +
                   (d / "one.csv").string());
  REQUIRE_MESSAGE(one.rc == 0, one.out);
  std::string cmd = "mpirun --allow-run-as-root --oversubscribe -np 2 " + std::string(ZEROSIM_CLI) +
                    " " + kSweep + " --threads 1 --out " + (d / "mpi.json").string() + " --csv " +
                    (d / "mpi.csv").string() + " > " + (d / "mpi.log").string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  REQUIRE_MESSAGE(rc == 0, slurp(d / "mpi.log"));
  CHECK(slurp(d / "mpi.json") == slurp(d / "one.json"));
  CHECK(slurp(d / "mpi.csv") == slurp(d / "one.csv"));
  CHECK_FALSE(fs::exists(d / "mpi.json.partial.r0"));
  CHECK_FALSE(fs::exists(d / "mpi.json.partial.r1"));
  fs::remove_all(d);
}
