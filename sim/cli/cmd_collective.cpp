// `zerosim collective`: simulates one collective over the first R GPUs (or every GPU, or the first
// G GPUs of every node) of a cluster across a range of sizes and prints an nccl-tests-like table
// (size, count, type, time, algbw, busbw, and NCCL's algorithm and protocol per row), the same
// columns as JSON, or nccl-tests' own text format (--nccl-tests), which `zerosim calibrate
// import-nccl-tests` reads back, so simulated and measured numbers compare column by column.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cli/cluster_flags.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/validators.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/nccl_model.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
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
  std::string proto = "auto";
  int ranks = 0;
  int gpus_per_node = 0;
  int gpus_per_thread = 1;  // nccl-tests' -g: GPUs each benchmark thread drives
  bool nccl_tests = false;
  std::string bytes, min_bytes, max_bytes;
  double step_factor = 2;
  NetworkTier tier = NetworkTier::Flow;
  std::string profile;
  bool json = false;
  std::string out;  // "": stdout
};

// The table goes to --out (written atomically) or to stdout.
void emit(const CollectiveOptions& o, const std::string& text) {
  if (o.out.empty() || o.out == "-")
    std::cout << text;
  else
    write_file_atomic(o.out, text);
}

// Rows of one collective table: more than nccl-tests' -f 2 from 1 byte to 2^64 (65 rows) needs.
constexpr std::size_t kMaxRows = 4096;

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
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi); s *= o.step_factor) {
    if (sizes.size() == kMaxRows)  // a factor of 1 + 1e-16 would take 2^52 rows per doubling
      throw flag_error("--step-factor",
                       fmt::format("{} gives more than {} sizes from --min-bytes to --max-bytes "
                                   "(the limit on rows)",
                                   o.step_factor, kMaxRows));
    sizes.push_back(static_cast<std::uint64_t>(s));
  }
  return sizes;
}

constexpr int kMaxAllToAllRanks = 1024;

// Every row simulates the op again, and an op's time to simulate grows with its flows (one per
// ring edge, one per ordered pair of an all_to_all): rows x flows per row is bounded (README,
// Limits). 2^25 is 32 rows of a 1024-rank all_to_all (nccl-tests' 1 B-1 GiB at -f 2 is 31) and
// 1024 rows of a 32768-rank ring.
constexpr std::uint64_t kMaxRowFlows = std::uint64_t{1} << 25;

void check_row_flows(const CollectiveOptions& o, const CollectiveOp& op, const Topology& topo,
                     std::size_t rows) {
  const std::uint64_t flows = std::max<std::uint64_t>(max_phase_flows(op, topo), 1);
  if (rows <= kMaxRowFlows / flows) return;
  throw flag_error(
      o.bytes.empty() ? "--max-bytes" : "--bytes",
      fmt::format("{} sizes of {} flows each ({} ranks) exceed the limit of {} "
                  "flows over all sizes (the rows x flows every size simulates); "
                  "give fewer sizes (--min-bytes, --max-bytes, --step-factor) or "
                  "fewer ranks",
                  rows, flows, op.groups.empty() ? 0 : op.groups.front().size(), kMaxRowFlows));
}

// The ranks: the first R GPUs, or the first G GPUs of every node (nccl-tests run with G ranks per
// node), or every GPU.
std::vector<int> ranks_of(const CollectiveOptions& o, const Topology& topo) {
  if (o.gpus_per_node > 0 && o.ranks > 0)
    throw flag_error("--gpus-per-node", "give either --ranks or --gpus-per-node, not both");
  std::vector<int> all;
  if (o.gpus_per_node > 0) {
    if (o.gpus_per_node > topo.gpus_per_node())
      throw flag_error("--gpus-per-node", fmt::format("must be at most the node's {} GPUs, got {}",
                                                      topo.gpus_per_node(), o.gpus_per_node));
    for (int node = 0; node < topo.node_count(); ++node)
      for (int l = 0; l < o.gpus_per_node; ++l) all.push_back(node * topo.gpus_per_node() + l);
  } else {
    const int ranks = o.ranks == 0 ? topo.gpu_count() : o.ranks;
    if (ranks < 2 || ranks > topo.gpu_count())
      throw flag_error("--ranks", fmt::format("must be between 2 and the cluster's {} GPUs, got {}",
                                              topo.gpu_count(), ranks));
    for (int r = 0; r < ranks; ++r) all.push_back(r);
  }
  if (all.size() < 2)
    throw flag_error(o.gpus_per_node > 0 ? "--gpus-per-node" : "--ranks",
                     fmt::format("a collective needs at least 2 ranks, got {}", all.size()));
  return all;
}

// nccl-tests' -g: a thread drives GPUs of its own node, the same number on every node.
void check_gpus_per_thread(const CollectiveOptions& o, int ranks, int nodes) {
  const int per_node = ranks / nodes;
  if (o.gpus_per_thread > 1 && ranks % nodes != 0)
    throw flag_error(
        "--gpus-per-thread",
        fmt::format("needs the same ranks on every node ({} ranks on {} nodes)", ranks, nodes));
  if (per_node % o.gpus_per_thread != 0)
    throw flag_error("--gpus-per-thread",
                     fmt::format("must divide the {} rank(s) per node (a thread drives GPUs of its "
                                 "own node), got {}",
                                 per_node, o.gpus_per_thread));
}

std::vector<std::vector<int>> groups_for(CollKind kind, const std::vector<int>& all) {
  if (kind != CollKind::SendRecv) return {all};
  // nccl-tests' sendrecv: every rank sends to the next one and receives from the previous one.
  std::vector<std::vector<int>> pairs;
  const std::size_t n = all.size();
  for (std::size_t r = 0; r < n; ++r) pairs.push_back({all[r], all[(r + 1) % n]});
  return pairs;
}

// nccl-tests' count column: elements per rank's send buffer (all_gather: per rank's share).
std::uint64_t count_of(CollKind kind, std::uint64_t size, int ranks) {
  const std::uint64_t elems = size / kTypeBytes;
  return kind == CollKind::AllGather || kind == CollKind::ReduceScatter ||
                 kind == CollKind::AllToAll
             ? elems / static_cast<std::uint64_t>(ranks)
             : elems;
}

const char* perf_name(CollKind kind) {
  switch (kind) {
    case CollKind::AllGather:
      return "all_gather_perf";
    case CollKind::ReduceScatter:
      return "reduce_scatter_perf";
    case CollKind::AllReduce:
      return "all_reduce_perf";
    case CollKind::AllToAll:
      return "alltoall_perf";
    case CollKind::SendRecv:
      return "sendrecv_perf";
  }
  return "?";
}

// --algo: NCCL's algorithms (as NCCL_ALGO) or zerosim's compositions.
void set_algorithm(CollectiveOp& op, const std::string& algo) {
  for (const char* nccl : {"tree", "nvls", "nvlstree", "pat"})
    if (algo == nccl) {
      op.nccl_algo = parse_nccl_algo(algo, "--algo");
      return;
    }
  op.algorithm = parse_algorithm(algo, "--algo");
  if (algo == "ring") op.nccl_algo = NcclAlgo::Ring;
}

// The collective to time, at the first size: its kind, algorithm, protocol and groups.
CollectiveOp collective_op(const CollectiveOptions& o, CollKind kind,
                           const std::vector<int>& members, std::uint64_t first_size) {
  CollectiveOp op;
  op.kind = kind;
  set_algorithm(op, o.algo);
  op.nccl_proto = parse_nccl_proto(o.proto, "--proto");
  op.groups = groups_for(kind, members);
  op.label = fmt::format("{}.{}ranks", to_string(kind), members.size());
  op.bytes = static_cast<double>(first_size);
  return op;
}

// NCCL's algorithms and protocols are options only where NCCL runs the collective.
void check_nccl_settings(const CollectiveOptions& o, const CollectiveOp& op, Algorithm chosen) {
  if (!is_nccl_collective(op) &&
      (op.nccl_proto != NcclProto::Auto || (op.nccl_algo != NcclAlgo::Auto && o.algo != "ring")))
    throw flag_error(op.nccl_proto != NcclProto::Auto ? "--proto" : "--algo",
                     fmt::format("NCCL's algorithms and protocols apply to all_gather, "
                                 "reduce_scatter and all_reduce run by NCCL; {} with algorithm {} "
                                 "is a point-to-point exchange (Simple)",
                                 to_string(op.kind), to_string(chosen)));
}

// The rows of every size, in the three formats: JSON, the table and nccl-tests' rows.
struct CollectiveRows {
  json rows = json::array();
  std::string table, nccl_rows;
  double busbw_sum = 0;
};

// Times the collective at every size (op.bytes is set to each in turn).
CollectiveRows time_sizes(const CollectiveOptions& o, CollectiveOp& op,
                          const std::vector<std::uint64_t>& sizes, int ranks, Algorithm chosen,
                          const Topology& topo, const CostProfile& profile) {
  const CollKind kind = op.kind;
  CollectiveRows out;
  for (std::uint64_t size : sizes) {
    op.bytes = static_cast<double>(size);
    const double t = nccl_tests_time(o.tier, op, topo, profile, o.gpus_per_thread);
    const double algbw = static_cast<double>(size) / t / kGBpsToBps;
    const double busbw = algbw * busbw_factor(kind, ranks);
    const std::uint64_t count = count_of(kind, size, ranks);
    const std::optional<NcclChoice> c = nccl_choice_for(op, topo, profile);
    const std::string algo = c ? to_string(c->algo) : to_string(chosen);
    const std::string proto = c ? to_string(c->proto) : to_string(NcclProto::Simple);
    out.busbw_sum += busbw;
    out.rows.push_back({{"size_bytes", size},
                        {"count", count},
                        {"type", kTypeName},
                        {"time_us", t * 1e6},
                        {"algbw_GBps", algbw},
                        {"busbw_GBps", busbw},
                        {"algorithm", algo},
                        {"protocol", proto}});
    out.table += fmt::format("{:>14} {:>12} {:>6} {:>12.2f} {:>10.2f} {:>10.2f}  {:<8} {}\n", size,
                             count, kTypeName, t * 1e6, algbw, busbw, algo, proto);
    const bool reduces = kind == CollKind::AllReduce || kind == CollKind::ReduceScatter;
    const std::string cols = fmt::format("{:>7.2f} {:>7.2f} {:>7.2f} {:>6}", t * 1e6, algbw, busbw,
                                         kind == CollKind::AllToAll ? "N/A" : "0");
    out.nccl_rows += fmt::format("{:>12} {:>12} {:>8} {:>7} {:>7} {} {}\n", size, count, kTypeName,
                                 reduces ? "sum" : "none", -1, cols, cols);
  }
  return out;
}

// What the command prints, given the options, the cluster and the collective it timed.
struct CollectiveRun {
  const CollectiveOptions& o;
  const Topology& topo;
  const CostProfile& profile;
  CollKind kind;
  Algorithm chosen;
  const std::vector<int>& members;
  const std::vector<std::uint64_t>& sizes;
  int nodes;
  CollectiveRows rows;

  double avg_busbw() const { return rows.busbw_sum / static_cast<double>(sizes.size()); }
};

// nccl-tests' text format: its header, a Rank line per rank, its columns and rows.
std::string nccl_tests_text(const CollectiveRun& c) {
  const Topology& topo = c.topo;
  std::string out = fmt::format(
      "# nccl-tests text format written by zerosim collective (simulated: tier {}, profile {}, "
      "cluster {})\n# Collective test starting: {}\n# nThread 1 nGpus {} minBytes {} maxBytes {} "
      "step: {:g}(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0\n#\n"
      "# Using devices\n",
      choice_name(c.o.tier), c.profile.name, topo.name(), perf_name(c.kind), c.o.gpus_per_thread,
      c.sizes.front(), c.sizes.back(), c.o.step_factor);
  for (std::size_t r = 0; r < c.members.size(); ++r) {
    const int g = c.members[r];
    out += fmt::format("#  Rank {:>2} Group  0 Pid {:>6} on {:>10} device {:>2} [0x{:02x}] {}\n", r,
                       0, fmt::format("node{}", topo.node_of(g)), topo.local_of(g),
                       topo.local_of(g), topo.gpu_model());
  }
  out +=
      "#\n#                                                              out-of-place          "
      "             in-place          \n#       size         count      type   redop    root   "
      "  time   algbw   busbw #wrong     time   algbw   busbw #wrong\n#        (B)    "
      "(elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
      "(GB/s)       \n";
  out += c.rows.nccl_rows;
  out += fmt::format("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {:.4f} \n#\n",
                     c.avg_busbw());
  return out;
}

std::string json_text(const CollectiveRun& c) {
  const Topology& topo = c.topo;
  json out{{"schema_version", kSchemaVersion},
           {"command", "collective"},
           {"cluster", topo.name()},
           {"node_type", topo.node_type()},
           {"nodes", topo.node_count()},
           {"gpus_per_node", topo.gpus_per_node()},
           {"op", to_string(c.kind)},
           {"algorithm", to_string(c.chosen)},
           {"ranks", static_cast<int>(c.members.size())},
           {"rank_nodes", c.nodes},
           {"gpus_per_thread", c.o.gpus_per_thread},
           {"tier", choice_name(c.o.tier)},
           {"profile", c.profile.name},
           {"profile_collectives", collectives_trust(c.profile)},
           {"rows", c.rows.rows},
           {"avg_busbw_GBps", c.avg_busbw()}};
  return out.dump(2) + "\n";
}

// The default table: a header line on the cluster and the collective, the columns, the rows.
std::string table_text(const CollectiveRun& c) {
  const Topology& topo = c.topo;
  std::string text = fmt::format(
      "# zerosim collective: {} ({}), {} ranks on {} node(s) of {} ({} node(s) x {} GPUs, {} x "
      "{:g} Gbps NICs), tier {}, profile {} (NCCL {})\n# profile {}'s collectives: {}\n",
      to_string(c.kind), to_string(c.chosen), c.members.size(), c.nodes, topo.name(),
      topo.node_count(), topo.gpus_per_node(), topo.nics_per_node(), topo.nic_Bps() / kGbpsToBps,
      choice_name(c.o.tier), c.profile.name, c.profile.nccl.version, c.profile.name,
      collectives_trust(c.profile));
  text += fmt::format("{:>14} {:>12} {:>6} {:>12} {:>10} {:>10}  {:<8} {}\n", "size(B)", "count",
                      "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algo", "proto");
  text += c.rows.table;
  text += fmt::format("# Avg bus bandwidth : {:.2f} GB/s\n", c.avg_busbw());
  return text;
}

void run(const CollectiveOptions& o) {
  const CollKind kind = parse_coll_op(o.op, "--op");
  check_output_paths({data_input("--cluster", "topologies", o.cluster.cluster),
                      data_input("--profile", "calibrate/profiles", o.profile)},
                     {{"--out", o.out}});
  const std::vector<std::uint64_t> sizes = sizes_of(o);
  begin_work();
  ClusterFlags cluster = o.cluster;  // a cluster past the tier's limit is refused unbuilt
  cluster.overrides.max_gpus = tier_max_gpus(o.tier);
  cluster.overrides.max_gpus_of = fmt::format("the {} tier", choice_name(o.tier));
  cluster.overrides.max_unfolded_gpus = unfolded_max_gpus();
  const Topology topo = load_from(cluster);
  const std::vector<int> members = ranks_of(o, topo);
  const int ranks = static_cast<int>(members.size());
  // all_to_all sends from every rank to every other: its flows, and the time to simulate them,
  // grow with the square of the ranks (README, Limits).
  if (kind == CollKind::AllToAll && ranks > kMaxAllToAllRanks)
    throw flag_error(o.ranks > 0           ? "--ranks"
                     : o.gpus_per_node > 0 ? "--gpus-per-node"
                                           : "--nodes",
                     fmt::format("all_to_all over {} ranks, more than its limit of {} ranks", ranks,
                                 kMaxAllToAllRanks));
  const CostProfile profile = select_cost_profile(o.profile, topo);
  CollectiveOp op = collective_op(o, kind, members, sizes.front());
  const Algorithm chosen = select_algorithm(op, topo);  // validates before the sweep
  check_nccl_settings(o, op, chosen);
  const int nodes = comm_shape(op, topo).nodes;
  check_gpus_per_thread(o, ranks, nodes);
  check_row_flows(o, op, topo, sizes.size());
  CollectiveRows rows = time_sizes(o, op, sizes, ranks, chosen, topo, profile);
  const CollectiveRun c{o, topo, profile, kind, chosen, members, sizes, nodes, std::move(rows)};
  if (o.nccl_tests)
    emit(o, nccl_tests_text(c));
  else if (o.json)
    emit(o, json_text(c));
  else
    emit(o, table_text(c));
}

}  // namespace

void register_collective(CLI::App& app) {
  auto opts = std::make_shared<CollectiveOptions>();
  CLI::App* sub = app.add_subcommand(
      "collective", "simulate one collective and print an nccl-tests-like table (algbw, busbw)");
  add_cluster_flags(sub, opts->cluster);
  sub->add_option("--op", opts->op,
                  "all_gather|reduce_scatter|all_reduce|all_to_all|send_recv (or nccl-tests' "
                  "allgather|reducescatter|allreduce|alltoall|sendrecv)")
      ->required();
  sub->add_option("--algo", opts->algo,
                  "NCCL's ring|tree|nvls|nvlstree|pat (as NCCL_ALGO), zerosim's "
                  "hierarchical|direct|two_hop|intra_node, or auto (default: NCCL's choice)");
  sub->add_option("--proto", opts->proto, "LL|LL128|Simple|auto, as NCCL_PROTO (default: auto)");
  sub->add_option("--ranks", opts->ranks, "use the first R GPUs, R >= 2 (default: every GPU)")
      ->check(int_range(2));
  sub->add_option("--gpus-per-node", opts->gpus_per_node,
                  "use the first G GPUs of every node (nccl-tests with G ranks per node)")
      ->check(int_range(1));
  sub->add_option("--gpus-per-thread", opts->gpus_per_thread,
                  "GPUs each benchmark thread drives, as nccl-tests' -g (default 1: one process "
                  "per GPU); a call then takes at least that many host launches")
      ->check(int_range(1));
  sub->add_option("--bytes", opts->bytes, "size in nccl-tests' convention, e.g. 1GiB");
  sub->add_option("--min-bytes", opts->min_bytes, "smallest size of a sweep");
  sub->add_option("--max-bytes", opts->max_bytes, "largest size of a sweep");
  sub->add_option("--step-factor", opts->step_factor,
                  "size multiplier between rows, > 1 (default 2; at most 4096 rows)")
      ->check(finite_range(1, 1e6));
  add_scenario_option(sub, scenario_param("--tier"), opts->tier);
  sub->add_option("--profile", opts->profile,
                  "cost profile name or file (default: the one matching the GPU model)");
  sub->add_flag("--json", opts->json, "print JSON with the same columns");
  sub->add_option("--out", opts->out, "write the table (or JSON) to a file, atomically");
  sub->add_flag("--nccl-tests", opts->nccl_tests,
                "print nccl-tests' text format (full column set, Rank lines; import-nccl-tests "
                "reads it)");
  sub->callback([opts] { run(*opts); });
}

}  // namespace zerosim::cli
