// Splitting a sweep across MPI ranks (OpenMPI's mpirun). Rank r runs every size-th scenario from
// the r-th; rank 0 gathers every result back into index order, so the output equals a
// single-process run. Without MPI at build time, or when not launched by mpirun, the world is one
// rank and nothing is sent.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/result/step_result.hpp"
#include "sim/sweep/run_sweep.hpp"

namespace zerosim::sweep {

struct World {
  int rank = 0;
  int size = 1;
  int local_size = 1;  // ranks on this host, to share the cores
  bool mpi = false;    // MPI was initialized (launched under mpirun)
};

// Initializes MPI when the process was started by mpirun (OMPI_COMM_WORLD_SIZE / PMI_SIZE set) and
// MPI was found at build time; otherwise returns a one-rank world. Finalized by the destructor of
// the guard.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  const World& world() const { return world_; }

 private:
  World world_;
};

// The indices of `indices` (the sweep's, in order) this rank runs: the k-th when k % size == rank.
std::vector<std::size_t> indices_for_rank(const std::vector<std::size_t>& indices,
                                          const World& world);

// Outcome of one rank: its results, or the error that stopped it (exit code 2 for bad input, 1
// otherwise).
struct RankOutcome {
  std::vector<std::optional<StepResult>> results;  // by global index; only this rank's filled
  std::vector<InvalidScenario> invalid;            // bad-input scenarios, by index
  int error_code = 0;         // 0 ok, 2 bad input (InputError), 1 anything else
  std::string error_message;  // what() of the error
  std::string error_file, error_path, error_rule;  // the InputError's parts when error_code == 2
};

// Gathers every rank's outcome to rank 0. On rank 0 returns all results merged by index (other
// ranks get an empty vector). If any rank failed, rank 0 gets the first failure (lowest rank) in
// error_code/message.
RankOutcome gather_outcomes(const RankOutcome& mine, std::size_t total, const World& world);

// True when built with MPI support.
bool built_with_mpi();

}  // namespace zerosim::sweep
