// `zerosim collective`: simulates one collective over the first R GPUs (or every GPU) of a cluster
// across a range of sizes and prints an nccl-tests-like table (size, count, type, time, algbw,
// busbw) or the same columns as JSON, so simulated and measured numbers compare column by column.
#include <fmt/format.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/cluster_flags.hpp"
#include "sim/cli/commands.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network_model.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::cli {
namespace {

constexpr int kSchemaVersion = 1;
constexpr std::uint64_t kTypeBytes = 4;  // nccl-tests' default data type, float
constexpr const char* kTypeName = "float";

struct CollectiveOptions {
  ClusterFlags cluster;
  std::string op;
  std::string algo = "auto";
  int ranks = 0;
  std::string bytes, min_bytes, max_bytes;
  double step_factor = 2;
  std::string tier = "flow";
  std::string profile;
  bool json = false;
};

std::vector<std::uint64_t> sizes_of(const CollectiveOptions& o) {
  const bool range = !o.min_bytes.empty() || !o.max_bytes.empty();
  if (!o.bytes.empty() && range)
    throw flag_error("--bytes", "give either --bytes or --min-bytes/--max-bytes, not both");
  if (!o.bytes.empty()) return {parse_bytes(o.bytes, "--bytes")};
  if (o.min_bytes.empty() || o.max_bytes.empty())
    throw flag_error(o.min_bytes.empty() ? "--min-bytes" : "--max-bytes",
                     "give --bytes SIZE, or both --min-bytes and --max-bytes");
  const std::uint64_t lo = parse_bytes(o.min_bytes, "--min-bytes");
  const std::uint64_t hi = parse_bytes(o.max_bytes, "--max-bytes");
  if (lo > hi) throw flag_error("--min-bytes", fmt::format("{} exceeds --max-bytes {}", lo, hi));
  if (!(o.step_factor > 1))
    throw flag_error("--step-factor", fmt::format("must be greater than 1, got {}", o.step_factor));
  std::vector<std::uint64_t> sizes;
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi); s *= o.step_factor)
    sizes.push_back(static_cast<std::uint64_t>(s));
  return sizes;
}

std::vector<std::vector<int>> groups_for(CollKind kind, int ranks) {
  std::vector<int> all;
  for (int r = 0; r < ranks; ++r) all.push_back(r);
  if (kind != CollKind::SendRecv) return {all};
  // nccl-tests' sendrecv: every rank sends to the next one and receives from the previous one.
  std::vector<std::vector<int>> pairs;
  for (int r = 0; r < ranks; ++r) pairs.push_back({r, (r + 1) % ranks});
  return pairs;
}

void run(const CollectiveOptions& o) {
  const CollKind kind = parse_coll_kind(o.op, "--op");
  const Algorithm algo = parse_algorithm(o.algo, "--algo");
  if (o.tier != "flow" && o.tier != "analytic")
    throw flag_error("--tier", fmt::format("unknown tier '{}'; expected flow|analytic", o.tier));
  const std::vector<std::uint64_t> sizes = sizes_of(o);
  const Topology topo = load_from(o.cluster);
  const int ranks = o.ranks == 0 ? topo.gpu_count() : o.ranks;
  if (ranks < 2 || ranks > topo.gpu_count())
    throw flag_error("--ranks", fmt::format("must be between 2 and the cluster's {} GPUs, got {}",
                                            topo.gpu_count(), ranks));
  const CostProfile profile = select_cost_profile(o.profile, topo);

  CollectiveOp op;
  op.kind = kind;
  op.algorithm = algo;
  op.groups = groups_for(kind, ranks);
  op.label = fmt::format("{}.{}ranks", to_string(kind), ranks);
  op.bytes = static_cast<double>(sizes.front());
  const Algorithm chosen = select_algorithm(op, topo);  // validates before the sweep

  json rows = json::array();
  std::string table;
  double busbw_sum = 0;
  for (std::uint64_t size : sizes) {
    op.bytes = static_cast<double>(size);
    const double t = collective_time(o.tier, op, topo, profile);
    const double algbw = static_cast<double>(size) / t / kGBpsToBps;
    const double busbw = algbw * busbw_factor(kind, ranks);
    const std::uint64_t count = size / kTypeBytes;
    busbw_sum += busbw;
    rows.push_back({{"size_bytes", size},
                    {"count", count},
                    {"type", kTypeName},
                    {"time_us", t * 1e6},
                    {"algbw_GBps", algbw},
                    {"busbw_GBps", busbw}});
    table += fmt::format("{:>14} {:>12} {:>6} {:>12.2f} {:>10.2f} {:>10.2f}\n", size, count,
                         kTypeName, t * 1e6, algbw, busbw);
  }

  if (o.json) {
    json out{{"schema_version", kSchemaVersion},
             {"command", "collective"},
             {"cluster", topo.name()},
             {"node_type", topo.node_type()},
             {"nodes", topo.node_count()},
             {"gpus_per_node", topo.gpus_per_node()},
             {"op", to_string(kind)},
             {"algorithm", to_string(chosen)},
             {"ranks", ranks},
             {"tier", o.tier},
             {"profile", profile.name},
             {"rows", rows},
             {"avg_busbw_GBps", busbw_sum / static_cast<double>(sizes.size())}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format(
      "# zerosim collective: {} ({}), {} ranks of {} ({} node(s) x {} GPUs, {} x {:g} Gbps NICs), "
      "tier {}, profile {}\n",
      to_string(kind), to_string(chosen), ranks, topo.name(), topo.node_count(),
      topo.gpus_per_node(), topo.nics_per_node(), topo.nic_Bps() / kGbpsToBps, o.tier,
      profile.name);
  std::cout << fmt::format("{:>14} {:>12} {:>6} {:>12} {:>10} {:>10}\n", "size(B)", "count", "type",
                           "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  std::cout << table;
  std::cout << fmt::format("# Avg bus bandwidth : {:.2f} GB/s\n",
                           busbw_sum / static_cast<double>(sizes.size()));
}

}  // namespace

void register_collective(CLI::App& app) {
  auto opts = std::make_shared<CollectiveOptions>();
  CLI::App* sub = app.add_subcommand(
      "collective", "simulate one collective and print an nccl-tests-like table (algbw, busbw)");
  add_cluster_flags(sub, opts->cluster);
  sub->add_option("--op", opts->op, "all_gather|reduce_scatter|all_reduce|all_to_all|send_recv")
      ->required();
  sub->add_option("--algo", opts->algo,
                  "ring|hierarchical|direct|two_hop|intra_node|auto (default: auto)");
  sub->add_option("--ranks", opts->ranks, "use the first R GPUs (default: every GPU)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--bytes", opts->bytes, "size in nccl-tests' convention, e.g. 1GiB");
  sub->add_option("--min-bytes", opts->min_bytes, "smallest size of a sweep");
  sub->add_option("--max-bytes", opts->max_bytes, "largest size of a sweep");
  sub->add_option("--step-factor", opts->step_factor, "size multiplier between rows (default 2)");
  sub->add_option("--tier", opts->tier, "network model: flow (default) or analytic");
  sub->add_option("--profile", opts->profile,
                  "cost profile name or file (default: the one matching the GPU model)");
  sub->add_flag("--json", opts->json, "print JSON with the same columns");
  sub->callback([opts] { run(*opts); });
}

}  // namespace zerosim::cli
