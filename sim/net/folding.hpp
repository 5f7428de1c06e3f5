// Folding, the flow tier's cheapest symmetry: on a cluster with a block rotation
// (Topology::rotation_block_gpus: GPUs move by a leaf's worth of servers, routes follow), a set of
// flows that the rotation maps onto itself needs only its flows from block 0, each on the block-0
// images of its links. Every link of an orbit carries the same load and each orbit of flows has
// exactly one member leaving block 0, so the folded problem has the same max-min rates with 1/B of
// the flows, before any routing (colour refinement, equitable.hpp, then reduces it further).
// rotation_invariant says whether an op's lowering is such a set, from its groups alone.
#pragma once
#include "sim/collectives/collective.hpp"

namespace zerosim {

// True when the cluster has a block rotation and the image of every group is a group of the op:
// element for element, or the same cyclic sequence started at another node's first member with
// each node's members together (then a ring has the same edges, a two-hop all-to-all the same
// rails, a direct exchange the same pairs).
bool rotation_invariant(const GroupList& groups, const Topology& topo);

}  // namespace zerosim
