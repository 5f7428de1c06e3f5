// NCCL's tuner constants by release (nccl_model.cpp's tables: tuning.cc at v2.12.12 as quoted in
// ../shared/data/nccl-tuning-model.md, v2.18.3, v2.21.5 and v2.30.7 in ../shared/reference/nccl/):
// the tuner latency and bandwidth caps of a candidate against ncclTopoTuneModel's and
// ncclTopoGetAlgoTime's sums written out with each release's numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/collectives/nccl_model.hpp"
#include "tests/collectives/collectives_fixture.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;
using zerosim::testing::Approx;

namespace {

constexpr double kUs = 1e-6;
constexpr double kLaunchS = 5e-6;
constexpr int kChannels = 16;

CostProfile profile(const std::string& version, GpuArch arch, HostCpu cpu, bool nvls = false) {
  CostProfile p = test::shipped_profile("dgx-a100");
  p.nccl.version = version;
  p.nccl.version_code = nccl_version_code(version);
  p.nccl.arch = arch;
  p.nccl.host_cpu = cpu;
  p.nccl.channels = kChannels;
  p.nccl.launch_s = kLaunchS;
  p.nccl.nvls = nvls;
  return p;
}

CommShape shape(CollKind kind, int nodes, int ppn) {
  CommShape s;
  s.kind = kind;
  s.nodes = nodes;
  s.ppn = ppn;
  s.ranks = nodes * ppn;
  s.intra = LinkClass::NvLink;
  s.type_inter = NicPath::Pxb;
  return s;
}

NcclChoice only(const CommShape& s, const CostProfile& p, double bytes, NcclAlgo a, NcclProto pr) {
  const std::vector<NcclChoice> c = nccl_candidates(s, p, bytes, a, pr);
  REQUIRE(c.size() == 1);
  return c.front();
}

}  // namespace

TEST_CASE("Ring all-reduce plateau: the whole NCCL latency, base and steps, by release") {
  // 4 nodes x 8 GPUs: 2 (32 - 1) = 62 steps, of them across the network (nInterSteps) 2 x 4 = 8
  // in 2.12-2.22 (v2.18.3, v2.21.5) and 2 (4 - 1) = 6 in 2.23+ (v2.30.7).
  const CommShape s = shape(CollKind::AllReduce, 4, 8);
  const int steps = 62, ranks = 32;
  struct Case {
    std::string version;
    GpuArch arch;
    HostCpu cpu;
    double intra_us, net_us, plateau, from_bytes;
    int inter;
  };
  // 2.18+: intra steps at least the host's post overhead x3 (Intel 1 us, AMD 2 us); plateau from
  // 64 B per channel and rank, x1.4 (x1.9 on Volta). 2.12: no overhead, x1.9 from nRanks/16 x 64K.
  const double per_channel = 64.0 * kChannels * ranks;
  const std::vector<Case> cases = {
      {"2.18", GpuArch::Ampere, HostCpu::Intel, 3.4, 14.0, 1.4, per_channel, 8},
      {"2.18", GpuArch::Ampere, HostCpu::Amd, 6.0, 14.0, 1.4, per_channel, 8},
      {"2.19", GpuArch::Volta, HostCpu::Intel, 3.4, 14.0, 1.9, per_channel, 8},
      {"2.21", GpuArch::Ampere, HostCpu::Amd, 6.0, 14.0, 1.4, per_channel, 8},
      {"2.22", GpuArch::Hopper, HostCpu::Intel, 3.4, 14.0, 1.4, per_channel, 8},
      {"2.29", GpuArch::Hopper, HostCpu::Intel, 3.4, 14.0, 1.4, per_channel, 6},
      {"2.17", GpuArch::Ampere, HostCpu::Amd, 3.4, 9.6, 1.9, ranks / 16.0 * 65536, 8},
  };
  for (const Case& c : cases) {
    CAPTURE(c.version);
    CAPTURE(static_cast<int>(c.cpu));
    const CostProfile p = profile(c.version, c.arch, c.cpu);
    const double nccl_us = 8.4 + (steps - c.inter) * c.intra_us + c.inter * c.net_us;
    const NcclChoice below = only(s, p, c.from_bytes / 2, NcclAlgo::Ring, NcclProto::Simple);
    const NcclChoice past = only(s, p, c.from_bytes, NcclAlgo::Ring, NcclProto::Simple);
    CHECK(below.tuner_latency_s == Approx(kLaunchS + nccl_us * kUs));
    CHECK(past.tuner_latency_s == Approx(kLaunchS + c.plateau * nccl_us * kUs));
  }
}

TEST_CASE("Tree Simple hops by release: 2.18 4/14 us, 2.21-2.22 28 us everywhere, 2.23+ 8.4 base") {
  const CommShape s = shape(CollKind::AllReduce, 4, 8);  // 7 NVLink hops, log2(4) = 2 network
  struct Case {
    std::string version;
    double base_us, nvlink_us, net_us;
  };
  for (const Case& c : std::vector<Case>{{"2.18", 0, 4, 14},
                                         {"2.20", 0, 4, 14},
                                         {"2.21", 0, 28, 28},
                                         {"2.22", 0, 28, 28},
                                         {"2.23", 8.4, 4, 14},
                                         {"2.30", 8.4, 4, 14}}) {
    CAPTURE(c.version);
    const CostProfile p = profile(c.version, GpuArch::Ampere, HostCpu::Intel);
    const NcclChoice t = only(s, p, 1 << 20, NcclAlgo::Tree, NcclProto::Simple);
    CHECK(t.tuner_latency_s ==
          Approx(kLaunchS + (c.base_us + 2 * (7 * c.nvlink_us + 2 * c.net_us)) * kUs));
  }
}

TEST_CASE("NVLS tree latency by release: 2.18 2 (nodes - 1) network hops, 2.21+ 2 log2(nodes)") {
  const CommShape s = shape(CollKind::AllReduce, 8, 8);  // 7 nodes apart, log2(8) = 3 levels
  struct Case {
    std::string version;
    double expected_us;
  };
  for (const Case& c : std::vector<Case>{{"2.18", 23 + 2 * 7 * 19.0},
                                         {"2.21", 25 + 2 * 3 * 14.0},
                                         {"2.22", 25 + 2 * 3 * 14.0},
                                         {"2.29", 25 + 2 * 3 * 20.9}}) {
    CAPTURE(c.version);
    const CostProfile p = profile(c.version, GpuArch::Hopper, HostCpu::Intel, true);
    const NcclChoice t = only(s, p, 1 << 26, NcclAlgo::NvlsTree, NcclProto::Simple);
    CHECK(t.tuner_latency_s == Approx(kLaunchS + c.expected_us * kUs));
  }
}

TEST_CASE("LL's busbw cap by release and host: the GPU's row on one node, the host CPU's across") {
  struct Case {
    std::string version;
    GpuArch arch;
    HostCpu cpu;
    int nodes;
    double cap_gbps, wire;
  };
  // llMaxBws rows (tuning.cc): Volta / Intel {39, 39, 20.4}, Ampere / AMD {87.7, 22.5, 19.0},
  // Hopper {87.7, 22.5, 19.0} in 2.18, {141, 45, 35} from 2.21. Row index1: the GPU
  // architecture's on one node; across nodes AMD's row 1 and any other host's row 0, whatever the
  // GPU. Ring LL's fraction: 1/4 (one node's all_gather 1/3) before 2.21, 1/2 from it.
  const std::vector<Case> cases = {
      {"2.18", GpuArch::Ampere, HostCpu::Intel, 1, 87.7, 3},
      {"2.18", GpuArch::Ampere, HostCpu::Intel, 2, 39.0, 4},
      {"2.18", GpuArch::Ampere, HostCpu::Amd, 2, 22.5, 4},
      {"2.18", GpuArch::Ampere, HostCpu::Amd, 8, 19.0, 4},
      {"2.18", GpuArch::Volta, HostCpu::Intel, 8, 20.4, 4},
      {"2.18", GpuArch::Hopper, HostCpu::Amd, 1, 87.7, 3},
      {"2.20", GpuArch::Hopper, HostCpu::Amd, 2, 22.5, 4},
      {"2.21", GpuArch::Hopper, HostCpu::Intel, 1, 141.0, 2},
      {"2.22", GpuArch::Hopper, HostCpu::Intel, 2, 39.0, 2},
      {"2.21", GpuArch::Hopper, HostCpu::Amd, 8, 19.0, 2},
      {"2.21", GpuArch::Hopper, HostCpu::Intel, 8, 20.4, 2},
      {"2.29", GpuArch::Hopper, HostCpu::Other, 2, 39.0, 2},
      {"2.17", GpuArch::Volta, HostCpu::Amd, 8, 19.0, 4},
  };
  for (const Case& c : cases) {
    CAPTURE(c.version);
    CAPTURE(c.nodes);
    CAPTURE(host_cpu_key(c.cpu));
    const CostProfile p = profile(c.version, c.arch, c.cpu);
    const NcclChoice ll =
        only(shape(CollKind::AllGather, c.nodes, 4), p, 1 << 20, NcclAlgo::Ring, NcclProto::LL);
    CHECK(ll.cap_Bps == Approx(c.cap_gbps * 1e9));
    CHECK(ll.wire == Approx(c.wire));
  }
}
