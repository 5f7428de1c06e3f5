// The path from a GPU to the NIC its inter-node channels use, as NCCL classifies it
// (src/graph/topo.h, v2.18.3 and v2.21.5: PATH_PIX 3, one PCIe bridge; PXB 4, several PCIe bridges
// without the host bridge; PXN 5, through another GPU of the node over NVLink; PHB 6, through the
// CPU's PCIe host bridge; SYS 7, across the CPUs' interconnect. v2.30.7 inserts C2C and P2C into
// the numbering, the order of these five unchanged). A property of the node's PCIe layout, an input
// of the topology: NCCL's tuner reads it (the graphs' typeInter) to enable LL128 across nodes.
#pragma once
#include <string>

namespace zerosim {

enum class NicPath { Pix = 3, Pxb = 4, Pxn = 5, Phb = 6, Sys = 7 };

const char* nic_path_key(NicPath p);  // "PIX" ... "SYS", NCCL's topoPathTypeStr spelling
// The path named `key` (PIX, PXB, PHB or SYS: PXN is NCCL's choice, see nccl_type_inter); false
// when `key` names none.
bool parse_nic_path(const std::string& key, NicPath& out);

// The graphs' typeInter NCCL computes for a node whose GPUs reach their NIC by `path`: with PXN
// (NCCL's default, NCCL_PXN_DISABLE=0) a GPU whose own path is worse than PXB sends through an
// NVLink peer that reaches the NIC by PXB or better, and the path becomes PATH_PXN (NCCL's
// paths.cc, ncclTopoComputePaths; not in shared/reference: recalled, the rule's outline only).
// `pxn`: such a peer exists on the node (some GPU of it reaches the NIC by PXB or better).
NicPath nccl_type_inter(NicPath path, bool pxn);

}  // namespace zerosim
