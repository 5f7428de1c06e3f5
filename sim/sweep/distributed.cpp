#include "sim/sweep/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#ifdef ZEROSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace zerosim::sweep {

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

// The wire format: one JSON text per rank, {error_code, error_message, results: [[index, result],
// ...]}.
std::string encode(const RankOutcome& o) {
  json j{{"error_code", o.error_code}, {"error_message", o.error_message},
         {"error_file", o.error_file}, {"error_path", o.error_path},
         {"error_rule", o.error_rule}, {"results", json::array()}};
  for (std::size_t i = 0; i < o.results.size(); ++i)
    if (o.results[i]) j["results"].push_back(json::array({i, to_json(*o.results[i])}));
  j["invalid"] = json::array();
  for (const InvalidScenario& v : o.invalid)
    j["invalid"].push_back(json::array({v.index, v.message}));
  return j.dump();
}

}  // namespace

bool built_with_mpi() {
#ifdef ZEROSIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession() {
#ifdef ZEROSIM_HAVE_MPI
  if (env_int("OMPI_COMM_WORLD_SIZE") > 0 || env_int("PMI_SIZE") > 0) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_.size);
    int local = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
    world_.local_size = local > 0 ? local : world_.size;
    world_.mpi = true;
  }
#endif
}

MpiSession::~MpiSession() {
#ifdef ZEROSIM_HAVE_MPI
  if (world_.mpi) MPI_Finalize();
#endif
}

std::vector<std::size_t> indices_for_rank(const std::vector<std::size_t>& indices,
                                          const World& world) {
  std::vector<std::size_t> out;
  for (std::size_t k = static_cast<std::size_t>(world.rank); k < indices.size();
       k += static_cast<std::size_t>(world.size))
    out.push_back(indices[k]);
  return out;
}

RankOutcome gather_outcomes(const RankOutcome& mine, std::size_t total, const World& world) {
  if (!world.mpi || world.size == 1) {
    RankOutcome all = mine;
    all.results.resize(total);
    return all;
  }
#ifdef ZEROSIM_HAVE_MPI
  std::string payload = encode(mine);
  int len = static_cast<int>(payload.size());
  std::vector<int> lens(world.rank == 0 ? world.size : 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs;
  std::string buffer;
  if (world.rank == 0) {
    long long sum = 0;
    for (int l : lens) {
      displs.push_back(static_cast<int>(sum));
      sum += l;
    }
    buffer.resize(static_cast<std::size_t>(sum));
  }
  MPI_Gatherv(payload.data(), len, MPI_CHAR, buffer.data(), lens.data(), displs.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  RankOutcome all;
  if (world.rank != 0) return all;
  all.results.resize(total);
  for (int r = 0; r < world.size; ++r) {
    json j = json::parse(
        buffer.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r])));
    int code = j.at("error_code").get<int>();
    if (code != 0 && all.error_code == 0) {
      all.error_code = code;
      all.error_message = j.at("error_message").get<std::string>();
      all.error_file = j.at("error_file").get<std::string>();
      all.error_path = j.at("error_path").get<std::string>();
      all.error_rule = j.at("error_rule").get<std::string>();
    }
    for (auto& entry : j.at("invalid"))
      all.invalid.push_back({entry.at(0).get<std::size_t>(), entry.at(1).get<std::string>()});
    for (auto& entry : j.at("results"))
      all.results[entry.at(0).get<std::size_t>()] =
          step_result_from_json(JsonReader(entry.at(1), fmt::format("<MPI rank {}>", r)));
  }
  std::sort(all.invalid.begin(), all.invalid.end(),
            [](const InvalidScenario& a, const InvalidScenario& b) { return a.index < b.index; });
  return all;
#else
  return mine;
#endif
}

}  // namespace zerosim::sweep
