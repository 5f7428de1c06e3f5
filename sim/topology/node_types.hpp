// Server (node) types the cluster builders know, with the datasheet value behind every constant.
// Bandwidths are per direction. Latencies are nominal per-hop values (assumed, not datasheet); the
// cost profile's per-class alpha is what the network models charge for startup.
#pragma once
#include <string_view>

#include "sim/topology/nic_path.hpp"

namespace zerosim {

struct NodeTypeSpec {
  const char* name;
  const char* gpu_model;
  int gpus;                 // GPUs per server
  double nvlink_GBps;       // GPU <-> NVSwitch, per GPU per direction
  double pcie_GBps;         // GPU <-> NIC over the server's PCIe switches, per direction
  int max_nics;             // compute-fabric adapters per server
  double default_nic_gbps;  // line rate per adapter
  // Host (CPU) memory per server, GiB: where ZeRO-Offload keeps what it moves off the GPUs.
  double host_memory_GiB;
  int nvme_drives;  // internal NVMe data drives per server (ZeRO-Infinity's swap space)
  // NCCL's path type from a GPU to its NIC (nic_path.hpp) and whether a GPU of the node reaches a
  // NIC by PXB or better, so that NCCL's PXN can route a farther GPU's traffic through it.
  NicPath nic_path;
  bool pxn;
};

// NVMe data drive sequential rate per direction, GB/s (assumed typical, not measured here): the
// U.2 data-centre drives of these servers are specified at about 2-3.5 GB/s (PCIe gen3, e.g.
// Micron 9300: 3.5 GB/s read and write) to 3.5-7 GB/s read and 2-4 GB/s write (gen4, e.g. Samsung
// PM1733: 7.0 read, 3.8 write); 3 GB/s is a sustained figure both directions reach. Consistent with
// ZeRO-Infinity (Rajbhandari et al. 2021, sec. 6/8), which reports about 25 GB/s of aggregate NVMe
// read per DGX-2 node (8 drives: about 3.1 GB/s each).
constexpr double kNvmeDriveGBps = 3.0;

// Nominal per-hop latencies (assumed): an NVSwitch traversal is a few hundred ns, a PCIe switch
// crossing plus NIC DMA setup about 0.5 us, an InfiniBand switch hop plus cable about 0.5 us.
// NVLink is deliberately lowest so that, among equal-hop paths inside a server, NVLink wins the
// latency tie-break over GPU -> NIC -> GPU PCIe paths.
constexpr double kNvLinkLatencyS = 0.3e-6;
constexpr double kPcieLatencyS = 0.5e-6;
constexpr double kNetworkLatencyS = 0.5e-6;

// PCIe x16 payload rates per direction: lanes x GT/s x encoding / 8 (PCI-SIG base
// specs 3.0/4.0/5.0): gen3 16 x 8 x 128/130 / 8 = 15.75 GB/s, gen4 31.5 GB/s, gen5 63 GB/s.
constexpr double kPcieGen3GBps = 15.75;
constexpr double kPcieGen4GBps = 31.5;
constexpr double kPcieGen5GBps = 63.0;

// NIC paths. DGX-2, DGX A100 and DGX H100/H200 put each GPU pair and its NICs under one PCIe
// switch complex (the DGX user guides' block diagrams: not in shared/): PXB or better, which NCCL's
// LL128 rule treats alike (PIX and PXB both pass), and PXN has a peer to use. Polaris: PHB, see its
// entry.
inline constexpr NodeTypeSpec kNodeTypes[] = {
    // NVIDIA DGX-2 datasheet: 16x Tesla V100 32 GB (SXM3) on 12 NVSwitches, "300 GB/s
    // bidirectional"
    // per GPU = 6 NVLink2 links x 25 GB/s per direction = 150 GB/s per direction; 8x 100 Gb/s
    // InfiniBand EDR / 100GigE (Mellanox ConnectX-5) for the compute fabric; PCIe gen3 switch tree.
    // Host: 1.5 TB DDR4 (24x 64 GB); storage: 30 TB, 8x 3.84 TB NVMe.
    {"dgx2-v100", "V100-SXM3-32GB", 16, 150.0, kPcieGen3GBps, 8, 100.0, 1536.0, 8, NicPath::Pxb,
     true},
    // NVIDIA DGX A100 datasheet: 8x A100 80 GB (SXM4), 6 NVSwitches, 600 GB/s bidirectional per GPU
    // (12 NVLink3 links x 25 GB/s per direction = 300 GB/s); 8x single-port ConnectX-6 200 Gb/s
    // HDR;
    // PCIe gen4.
    // DGX A100 640 GB (the 80 GB GPUs): host 2 TB DDR4; storage 30 TB, 8x 3.84 TB U.2 NVMe.
    {"dgx-a100", "A100-SXM4-80GB", 8, 300.0, kPcieGen4GBps, 8, 200.0, 2048.0, 8, NicPath::Pxb,
     true},
    // DGX A100 320 GB: the same machine with 8x A100 40 GB (SXM4, 1555 GB/s HBM2); host 1 TB
    // DDR4, storage 15 TB (4x 3.84 TB U.2 NVMe) (DGX A100 datasheet).
    {"dgx-a100-40gb", "A100-SXM4-40GB", 8, 300.0, kPcieGen4GBps, 8, 200.0, 1024.0, 4, NicPath::Pxb,
     true},
    // NVIDIA DGX H100 datasheet: 8x H100 80 GB (SXM5), 4 NVSwitches, 900 GB/s bidirectional per GPU
    // (18 NVLink4 links x 25 GB/s per direction = 450 GB/s); 8x ConnectX-7 400 Gb/s NDR (the OSFP
    // compute ports); PCIe gen5.
    // Host: 2 TB DDR5; storage: 30 TB, 8x 3.84 TB U.2 NVMe.
    {"dgx-h100", "H100-SXM5-80GB", 8, 450.0, kPcieGen5GBps, 8, 400.0, 2048.0, 8, NicPath::Pxb,
     true},
    // NVIDIA DGX H200 datasheet: as DGX H100 (900 GB/s NVLink4 per GPU, 8x ConnectX-7 400 Gb/s,
    // PCIe gen5) with 8x H200 141 GB.
    // Host 2 TB, storage 30 TB (8x 3.84 TB U.2 NVMe), as DGX H100.
    {"dgx-h200", "H200-SXM-141GB", 8, 450.0, kPcieGen5GBps, 8, 400.0, 2048.0, 8, NicPath::Pxb,
     true},
    // ALCF Polaris compute node (HPE Apollo 6500 Gen10+; ALCF "Polaris Machine Overview"):
    // 4x NVIDIA A100-SXM4-40GB (the name nccl-tests prints on Polaris), 2x HPE Slingshot-11 NICs
    // (Cassini, 200 Gb/s each), GPUs and NICs on PCIe gen4. NVLink3: the 4 GPUs are fully
    // connected, 12 links x 25 GB/s = 300 GB/s per direction per GPU, 4 links = 100 GB/s per
    // direction per GPU pair. The builder puts the GPUs on one switch vertex at 300 GB/s per GPU:
    // right for a GPU's aggregate (all-to-all, or NCCL rings spread over several channels), but
    // a single GPU pair may then get up to 300 GB/s where its direct links carry 100 GB/s.
    // Host: 512 GB DDR4; storage: 2x 1.6 TB NVMe SSDs (ALCF Polaris overview).
    // NIC path PHB, no PXN peer: an assumption. The shared logs print the GPUs' PCI bus ids 0x07,
    // 0x46, 0x85, 0xc7 (shared/data/nccl-tests/a100-polaris, "Using devices"): one per 64-bus
    // range, consistent with one GPU per root complex of the node's AMD EPYC and no PCIe switch
    // shared with a NIC; then a GPU reaches a NIC through the host bridge at best (PHB), and no GPU
    // reaches one by PXB for PXN to use. The NICs' bus ids are not in the logs. The logs agree:
    // with LL128 across nodes, a 2-node fit put LL128's network step at 36.6 us (NCCL's table:
    // 4.0) to meet the 128 KiB-4 MiB rows.
    {"polaris-a100", "A100-SXM4-40GB", 4, 300.0, kPcieGen4GBps, 2, 200.0, 512.0, 2, NicPath::Phb,
     false},
};

inline const NodeTypeSpec* find_node_type(std::string_view name) {
  for (const auto& t : kNodeTypes)
    if (name == t.name) return &t;
  return nullptr;
}

// Fabric switches: 64-port leaves (e.g. Quantum-2 QM9700 has 64 NDR ports), half down, half up.
constexpr int kLeafDownPorts = 32;  // rail fabric: 32 servers per leaf per rail; fat-tree: 32 NICs
constexpr int kMaxSpines = 32;      // one uplink from every leaf to each spine, at most 32 spines
// A builder cluster's size: at most 131072 nodes and 2^20 GPUs (131072 DGX H100 nodes: about 2.3 GB
// of graph; README, Limits).
constexpr int kMaxNodes = 131072;
constexpr int kMaxBuilderGpus = 1 << 20;

}  // namespace zerosim
