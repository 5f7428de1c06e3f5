// DirectExchangeCost: see direct_exchange_cost.hpp.
#include "sim/collectives/direct_exchange_cost.hpp"

#include <algorithm>

#include "sim/collectives/lowering_detail.hpp"
#include "sim/collectives/nccl_model.hpp"
#include "sim/core/error.hpp"

namespace zerosim {

DirectExchangeCost::DirectExchangeCost(const CollectiveOp& op, const Topology& topo)
    : op_(op), topo_(&topo) {
  if (op.kind != CollKind::AllToAll || op.groups.size() != 1 ||
      select_algorithm(op, topo) != Algorithm::Direct)
    throw InputError("<collective>", op.label,
                     "a direct exchange's cost is of one all_to_all group on the direct algorithm");
  const std::vector<int>& group = op.groups.front();
  // The exchange at one byte, as the analytic tier lowers it (add_direct_exchange).
  coll_detail::PhaseBuilder pb;
  pb.reserve_more(group.size() * (group.size() - 1));
  const double per_pair = 1.0 / static_cast<double>(group.size());
  for (int src : group)
    for (int dst : group) {
      if (src == dst) continue;
      const coll_detail::TransferHops h =
          coll_detail::add_transfer_hops(pb, src, dst, per_pair, topo);
      HopShape s{h.count, h.cls, h.route_latency_s[0] + h.route_latency_s[1]};
      const auto it = std::find_if(shapes_.begin(), shapes_.end(), [&](const HopShape& x) {
        return x.count == s.count && x.cls == s.cls;
      });
      if (it == shapes_.end())
        shapes_.push_back(s);
      else
        it->route_latency_s = std::max(it->route_latency_s, s.route_latency_s);
    }
  peers_ = coll_detail::peers_per_node(group, topo);
  // Each link's bytes per byte of the op's size, from every flow's route.
  std::vector<double> load(topo.links().size(), 0.0);
  std::vector<LinkId> links;
  for (const Flow& fl : pb.take().flows) {
    links.clear();
    topo.route_into(fl.src_gpu, fl.dst_gpu, links);
    for (LinkId l : links) load[l] += fl.bytes;
  }
  for (std::size_t l = 0; l < load.size(); ++l) {
    if (!(load[l] > 0)) continue;
    const LinkInfo& info = topo.link(static_cast<LinkId>(l));
    double& s = s_per_byte_[static_cast<std::size_t>(info.cls)];
    s = std::max(s, load[l] / info.bandwidth_Bps);
  }
}

double DirectExchangeCost::time_s(const CostProfile& profile, double bytes) const {
  double hop_s = 0;
  for (const HopShape& s : shapes_) {
    double alpha = 0;
    for (int k = 0; k < s.count; ++k)
      alpha += profile.link_class(s.cls[static_cast<std::size_t>(k)]).hop_latency_s;
    hop_s = std::max(hop_s, alpha + s.route_latency_s);
  }
  const auto [node_peers, net_peers] = coll_detail::busiest_peers(peers_, profile);
  const double latency = std::max(0.0, nccl_p2p_latency(profile, hop_s, node_peers, net_peers));
  double busiest = 0;
  for (std::size_t c = 0; c < kClasses; ++c)
    if (s_per_byte_[c] > 0)
      busiest = std::max(busiest,
                         s_per_byte_[c] / profile.link_class(static_cast<LinkClass>(c)).efficiency);
  CollectiveOp op = op_;
  op.bytes = bytes;
  return latency + busiest / profile.nccl.p2p_efficiency * bytes +
         p2p_small_message_s(op, *topo_, profile);
}

}  // namespace zerosim
