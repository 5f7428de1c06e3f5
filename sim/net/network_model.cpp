// The registry of network tiers and the one-collective timing helper.
#include "sim/net/network_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"
#include "sim/net/analytic_network.hpp"
#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/flow_network.hpp"

namespace zerosim {

namespace {
[[noreturn]] void not_contention_free(const NetworkModel& m) {
  throw std::logic_error(std::string("network model '") + m.name() +
                         "' has contention: collectives run on the engine");
}
}  // namespace

std::pair<double, NetStats> NetworkModel::cost(const CollectiveOp&) { not_contention_free(*this); }
void NetworkModel::account(const NetStats&) { not_contention_free(*this); }
void NetworkModel::resume_stats(const NetStats&) {
  throw std::logic_error(std::string("network model '") + name() +
                         "' cannot say it is idle: a run cannot resume on it");
}

std::unique_ptr<NetworkModel> make_network_model(NetworkTier tier, Engine& engine,
                                                 const Topology& topo, const CostProfile& profile,
                                                 std::shared_ptr<FabricPlans> plans,
                                                 const NetworkOptions& options) {
  std::unique_ptr<NetworkModel> m;
  if (tier == NetworkTier::Flow) {
    auto flow = std::make_unique<FlowNetwork>(engine, topo, profile);
    flow->set_symmetry(options.flow_symmetry);
    flow->set_folding(options.flow_folding);
    flow->set_fabric_plans(plans);
    m = std::move(flow);
  } else {
    m = std::make_unique<AnalyticNetwork>(engine, topo, profile, !options.analytic_shortcuts,
                                          std::move(plans));
  }
  engine.add_model(m.get());
  return m;
}

double collective_time(NetworkTier tier, const CollectiveOp& op, const Topology& topo,
                       const CostProfile& profile) {
  Engine engine;
  auto model = make_network_model(tier, engine, topo, profile);
  double done = -1;
  model->expect_ops(std::span<const CollectiveOp>(&op, 1));
  model->start(op, [&] { done = engine.now(); });
  engine.run();
  return done;
}

double nccl_tests_time(NetworkTier tier, const CollectiveOp& op, const Topology& topo,
                       const CostProfile& profile, int gpus_per_thread) {
  return std::max(collective_time(tier, op, topo, profile),
                  gpus_per_thread * profile.nccl.host_launch_s);
}

std::optional<NcclChoice> nccl_choice_for(const CollectiveOp& op, const Topology& topo,
                                          const CostProfile& profile) {
  if (!is_nccl_collective(op)) return std::nullopt;
  select_algorithm(op, topo);
  return FabricPlans().get(op, topo, profile).nccl_choice(op, profile);
}

}  // namespace zerosim
