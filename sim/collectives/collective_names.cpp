// Names of collective kinds and algorithms, nccl-tests' bus-bandwidth factors and convenience
// groups.
#include <fmt/format.h>

#include <array>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/core/closest_match.hpp"
#include "sim/core/error.hpp"

namespace zerosim {
namespace {

constexpr std::array<std::pair<CollKind, const char*>, 5> kKindNames{{
    {CollKind::AllGather, "all_gather"},
    {CollKind::ReduceScatter, "reduce_scatter"},
    {CollKind::AllReduce, "all_reduce"},
    {CollKind::AllToAll, "all_to_all"},
    {CollKind::SendRecv, "send_recv"},
}};

// nccl-tests' and NCCL's spellings (--op only).
constexpr std::array<std::pair<CollKind, const char*>, 5> kNcclTestsNames{{
    {CollKind::AllGather, "allgather"},
    {CollKind::ReduceScatter, "reducescatter"},
    {CollKind::AllReduce, "allreduce"},
    {CollKind::AllToAll, "alltoall"},
    {CollKind::SendRecv, "sendrecv"},
}};

constexpr std::array<std::pair<Algorithm, const char*>, 6> kAlgoNames{{
    {Algorithm::Ring, "ring"},
    {Algorithm::Hierarchical, "hierarchical"},
    {Algorithm::Direct, "direct"},
    {Algorithm::TwoHopAllToAll, "two_hop"},
    {Algorithm::IntraNode, "intra_node"},
    {Algorithm::Auto, "auto"},
}};

template <typename Table>
std::string joined_names(const Table& table) {
  std::string out;
  for (const auto& [value, name] : table) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}

template <typename... Tables>
std::vector<std::string> names_of(const Tables&... tables) {
  std::vector<std::string> out;
  for (const auto* table : {&tables...})
    for (const auto& entry : *table) out.emplace_back(entry.second);
  return out;
}

}  // namespace

const char* to_string(CollKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "?";
}

const char* to_string(Algorithm a) {
  for (const auto& [algo, name] : kAlgoNames)
    if (algo == a) return name;
  return "?";
}

CollKind parse_coll_kind(const std::string& s, const std::string& where) {
  for (const auto& [kind, name] : kKindNames)
    if (s == name) return kind;
  throw flag_error(where,
                   fmt::format("unknown collective '{}'; expected one of {}{}", s,
                               joined_names(kKindNames), did_you_mean(s, names_of(kKindNames))));
}

CollKind parse_coll_op(const std::string& s, const std::string& where) {
  for (const auto& [kind, name] : kNcclTestsNames)
    if (s == name) return kind;
  for (const auto& [kind, name] : kKindNames)
    if (s == name) return kind;
  throw flag_error(
      where, fmt::format("unknown collective '{}'; expected one of {} (or nccl-tests' {}){}", s,
                         joined_names(kKindNames), joined_names(kNcclTestsNames),
                         did_you_mean(s, names_of(kKindNames, kNcclTestsNames))));
}

Algorithm parse_algorithm(const std::string& s, const std::string& where) {
  for (const auto& [algo, name] : kAlgoNames)
    if (s == name) return algo;
  throw flag_error(where,
                   fmt::format("unknown algorithm '{}'; expected one of {}{}", s,
                               joined_names(kAlgoNames), did_you_mean(s, names_of(kAlgoNames))));
}

double busbw_factor(CollKind k, int n) {
  if (n < 1) return 0;
  const double frac = static_cast<double>(n - 1) / n;
  switch (k) {
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AllToAll:
      return frac;
    case CollKind::AllReduce:
      return 2 * frac;
    case CollKind::SendRecv:
      return 1;
  }
  return 0;
}

std::vector<std::vector<int>> world_group(const Topology& topo) {
  std::vector<int> all(static_cast<std::size_t>(topo.gpu_count()));
  for (int g = 0; g < topo.gpu_count(); ++g) all[static_cast<std::size_t>(g)] = g;
  return {all};
}

std::vector<std::vector<int>> intra_node_groups(const Topology& topo, int group_size) {
  const int per_node = topo.gpus_per_node();
  if (group_size < 1 || group_size > per_node || per_node % group_size != 0)
    throw InputError("<collective>", "group_size",
                     fmt::format("intra-node group size {} must divide the {} GPUs per node",
                                 group_size, per_node));
  std::vector<std::vector<int>> groups;
  for (int first = 0; first < topo.gpu_count(); first += group_size) {
    std::vector<int> g(static_cast<std::size_t>(group_size));
    std::iota(g.begin(), g.end(), first);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<std::vector<int>> rail_groups(const Topology& topo) {
  std::vector<std::vector<int>> groups;
  for (int local = 0; local < topo.gpus_per_node(); ++local) {
    std::vector<int> g;
    g.reserve(static_cast<std::size_t>(topo.node_count()));
    for (int node = 0; node < topo.node_count(); ++node)
      g.push_back(node * topo.gpus_per_node() + local);
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace zerosim
