// Levenberg-Marquardt fit of the NCCL collective model's profile parameters.
//
// Parameters live in an unbounded space z with value = lo + (hi - lo) * sigmoid(z), so every step
// stays inside the plausible range. Residuals: each record's relative time error through the loss
// (a residual whose square is the loss, so LM minimizes it unchanged), plus a weak prior (kPrior *
// (z - z_base)) that keeps a parameter no record informs at the base value and picks the
// base-nearest of equally good fits. The Jacobian is taken by forward differences through the
// simulator itself, so the fitted profile reproduces exactly what `zerosim collective` and the
// network tiers compute. No library in the project's dependency set offers nonlinear least squares
// (Boost.Math's minimizers are one-dimensional), hence the small solver here.
#include "calibrate/fit/collective_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "sim/collectives/direct_exchange_cost.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/engine.hpp"
#include "sim/net/analytic_network.hpp"
#include "sim/net/analytic_plan_cache.hpp"
#include "sim/net/network_model.hpp"

namespace zerosim::calib {
namespace {

constexpr double kPrior = 0.02;
constexpr int kMaxIterations = 60;
constexpr std::uint64_t kSmallRecordBytes = std::uint64_t{4} << 20;

struct Accessor {
  const char* key;
  const char* meaning;
  double lo, hi;
  double* (*field)(CostProfile&);
  double scale;  // profile units per stored unit (us per s)
};

double* link_field(CostProfile& p, LinkClass c, int which) {
  LinkClassCost& l = p.link_classes.at(c);
  switch (which) {
    case 0:
      return &l.efficiency;
    case 1:
      return &l.hop_latency_s;
    case 2:
      return &l.ll_hop_latency_s;
    default:
      return &l.ll128_hop_latency_s;
  }
}

const Accessor kAccessors[] = {
    {"link_classes/network/efficiency",
     "bus bandwidth a ring reaches per NIC / NIC line rate (nccl-tests on InfiniBand and RoCE "
     "reach "
     "0.85-0.98)",
     0.5, 1.0, [](CostProfile& p) { return link_field(p, LinkClass::Network, 0); }, 1},
    {"link_classes/nvlink/efficiency",
     "bus bandwidth over NVLink / NVLink line rate per GPU per direction (nccl-tests on NVSwitch "
     "systems reach 0.7-0.85)",
     0.5, 1.0, [](CostProfile& p) { return link_field(p, LinkClass::NvLink, 0); }, 1},
    {"link_classes/network/hop_latency_us",
     "Simple-protocol latency of one ring step across the network (NCCL hwLat NET: 9.6-28 us)", 1,
     60, [](CostProfile& p) { return link_field(p, LinkClass::Network, 1); }, 1e6},
    {"link_classes/network/ll128_hop_latency_us",
     "LL128 latency of one ring step across the network (NCCL hwLat NET: 4.0 us)", 0.5, 40,
     [](CostProfile& p) { return link_field(p, LinkClass::Network, 3); }, 1e6},
    {"link_classes/network/ll_hop_latency_us",
     "LL latency of one ring step across the network (NCCL hwLat NET: 2.7 us)", 0.5, 40,
     [](CostProfile& p) { return link_field(p, LinkClass::Network, 2); }, 1e6},
    {"link_classes/nvlink/hop_latency_us",
     "Simple-protocol latency of one ring step over NVLink (NCCL hwLat NVLINK: 3.4 us)", 0.3, 30,
     [](CostProfile& p) { return link_field(p, LinkClass::NvLink, 1); }, 1e6},
    {"link_classes/nvlink/ll128_hop_latency_us",
     "LL128 latency of one ring step over NVLink (NCCL hwLat NVLINK: 1.9 us)", 0.1, 20,
     [](CostProfile& p) { return link_field(p, LinkClass::NvLink, 3); }, 1e6},
    {"link_classes/nvlink/ll_hop_latency_us",
     "LL latency of one ring step over NVLink (NCCL hwLat NVLINK: 0.6 us)", 0.1, 20,
     [](CostProfile& p) { return link_field(p, LinkClass::NvLink, 2); }, 1e6},
    {"nccl/channels",
     "channels NCCL runs a collective on: its per-channel bandwidth caps (LL128 20 GB/s, 36.7 on "
     "Hopper; tree caps) multiply by it (NCCL opens 2-32 on these systems)",
     1, 32, [](CostProfile& p) { return &p.nccl.channels; }, 1},
    {"nccl/launch_us",
     "cost of one collective call on the GPUs' timeline: the kernel's start after the previous "
     "one, NCCL's setup, the proxy's wake-up (0-60 us; the shared logs' fits give 1.3-5.3 us; the "
     "host's launches are host_launch_us)",
     0, 60, [](CostProfile& p) { return &p.nccl.launch_s; }, 1e6},
    {"nccl/host_launch_us",
     "the host's time to launch one GPU's part of a collective call (NCCL's enqueue, the "
     "kernel launch; a CUDA launch alone takes 2-5 us): nccl-tests' thread driving G GPUs "
     "cannot time a call below G x this, so small collectives measure the host, not the GPUs",
     0, 20, [](CostProfile& p) { return &p.nccl.host_launch_s; }, 1e6},
    {"nccl/p2p_peer_us",
     "cost per peer on the same node of a grouped send/recv (one work element per peer; NVLink "
     "peers progress in the kernel)",
     0, 20, [](CostProfile& p) { return &p.nccl.p2p_peer_s; }, 1e6},
    {"nccl/p2p_net_peer_us",
     "cost per peer across the network of a grouped send/recv (the proxy thread posts and "
     "progresses each network peer's transfers in turn: 1-15 us per peer)",
     0, 20, [](CostProfile& p) { return &p.nccl.p2p_net_peer_s; }, 1e6},
    {"nccl/p2p_efficiency",
     "bandwidth of grouped send/recv (all_to_all) / a ring's over the same links (nccl-tests "
     "alltoall reaches 0.85-0.95 of line rate where rings reach 0.95-0.98)",
     0.5, 1.0, [](CostProfile& p) { return &p.nccl.p2p_efficiency; }, 1},
    {"nccl/p2p_small_net_peer_us",
     "extra cost per network peer of a grouped send/recv whose message per peer is below the "
     "profile's p2p_small_bytes (the network transport's small-message path; Polaris' 2-node "
     "alltoall: about 11 us)",
     0, 40, [](CostProfile& p) { return &p.nccl.p2p_small_net_peer_s; }, 1e6},
    {"nccl/ll128_efficiency",
     "LL128's achieved bandwidth / what NCCL's tuner assumes for it (120/128 of the link, 20 GB/s "
     "per channel before Hopper): the time of an LL128 collective, not NCCL's choice of it",
     0.3, 1.5, [](CostProfile& p) { return &p.nccl.ll128_efficiency; }, 1},
    {"nccl/ll_intra_efficiency",
     "LL's achieved bandwidth inside one node / what NCCL's tuner assumes for it (before 2.23 "
     "1/4 of the link for all-reduce, 1/3 otherwise, from 2.23 1/2; llMaxBw cap); LL's lines "
     "carry half data, so up to 2: the time of an LL collective inside a node, not NCCL's choice",
     0.3, 2.0, [](CostProfile& p) { return &p.nccl.ll_intra_efficiency; }, 1},
    {"nccl/nvls_efficiency",
     "NVLink SHARP all-reduce bandwidth / NVLink line rate per GPU: the time of an NVLS "
     "collective; NCCL chooses NVLS by its own constant, 0.85",
     0.3, 1.0, [](CostProfile& p) { return &p.nccl.nvls_efficiency; }, 1},
    {"nccl/nvls_chunk_us",
     "time each NVLS worker (channel x head) spends per chunk beyond moving its bytes, the "
     "cross-GPU synchronization of the chunk's reduce and broadcast (an NVLink round trip is "
     "about 1 us; the shared logs' fits give 0.75-1.45 us): the time of an "
     "NVLS collective, not NCCL's choice",
     0, 20, [](CostProfile& p) { return &p.nccl.nvls_chunk_s; }, 1e6},
    {"nccl/group_step_us",
     "least time of each step of a ring whose nodes span several of the fabric's groups "
     "(dragonfly groups joined by global links): the ring's buffer slots make every step wait "
     "for its slowest edge, one crossing groups (profiles with group_nodes only; the time, not "
     "NCCL's choice)",
     0, 40, [](CostProfile& p) { return &p.nccl.group_step_s; }, 1e6},
};

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }
double logit(double u) {
  u = std::clamp(u, 1e-6, 1 - 1e-6);
  return std::log(u / (1 - u));
}

// Solves (A) x = b for a small dense system (Gaussian elimination with partial pivoting).
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    if (std::fabs(a[c][c]) < 1e-300) a[c][c] = 1e-300;
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

// J^T J of the first `rows` rows of J.
std::vector<std::vector<double>> gram(const std::vector<std::vector<double>>& J, std::size_t rows) {
  const std::size_t K = J.empty() ? 0 : J.front().size();
  std::vector<std::vector<double>> F(K, std::vector<double>(K, 0.0));
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t a = 0; a < K; ++a)
      for (std::size_t b = 0; b < K; ++b) F[a][b] += J[i][a] * J[i][b];
  return F;
}

}  // namespace

std::vector<CollectiveParam> collective_params(const CostProfile& p, bool small_records) {
  CostProfile copy = p;
  std::vector<CollectiveParam> out;
  for (const Accessor& a : kAccessors) {
    const std::string key = a.key;
    if (key.rfind("nccl/nvls_", 0) == 0 && !p.nccl.nvls) continue;
    if (key == "nccl/p2p_small_net_peer_us" && !(p.nccl.p2p_small_bytes > 0)) continue;
    if (key == "nccl/group_step_us" && p.nccl.group_nodes == 0) continue;
    if (!small_records && key.find("/ll") != std::string::npos) continue;
    const double v = *a.field(copy) * a.scale;
    out.push_back({a.key, a.meaning, a.lo, a.hi, v, v, false, false, 0});
  }
  return out;
}

void set_collective_params(CostProfile& p, const std::vector<CollectiveParam>& params) {
  for (const CollectiveParam& c : params)
    for (const Accessor& a : kAccessors)
      if (c.key == a.key) *a.field(p) = c.value / a.scale;
}

Topology record_cluster(const CollectiveRecord& r, const std::string& cluster) {
  ClusterOverrides o;
  o.nodes = r.nodes;
  return load_cluster(cluster, o);
}

CollectiveOp record_op(const CollectiveRecord& r, const Topology& topo) {
  const int ppn = r.gpus_per_node > 0 ? r.gpus_per_node : (r.ranks + r.nodes - 1) / r.nodes;
  if (ppn > topo.gpus_per_node() || ppn * r.nodes != r.ranks)
    throw InputError(r.where, "/ranks",
                     fmt::format("{} ranks on {} node(s) do not fit cluster '{}' ({} GPUs per "
                                 "node) as {} per node",
                                 r.ranks, r.nodes, topo.name(), topo.gpus_per_node(), ppn));
  CollectiveOp op;
  op.kind = parse_coll_kind(r.op, r.where);
  std::vector<int> all;
  for (int node = 0; node < r.nodes; ++node)
    for (int l = 0; l < ppn; ++l) all.push_back(node * topo.gpus_per_node() + l);
  if (op.kind == CollKind::SendRecv) {
    std::vector<std::vector<int>> pairs;
    for (std::size_t i = 0; i < all.size(); ++i)
      pairs.push_back({all[i], all[(i + 1) % all.size()]});
    op.groups = GroupList(std::move(pairs));
  } else {
    op.groups = GroupList(std::vector<std::vector<int>>{all});
  }
  op.bytes = static_cast<double>(r.bytes);
  op.label = r.where;
  return op;
}

namespace {

// profile with the record's NCCL release (its tuning table), when the record names one.
CostProfile with_record_version(const CostProfile& profile, const CollectiveRecord& r) {
  CostProfile p = profile;
  if (!r.nccl_version.empty()) {
    p.nccl.version = r.nccl_version;
    p.nccl.version_code = nccl_version_code(r.nccl_version);
  }
  return p;
}

}  // namespace

double predict_record(const CollectiveRecord& r, const std::string& cluster,
                      const CostProfile& profile) {
  const Topology topo = record_cluster(r, cluster);
  return nccl_tests_time(NetworkTier::Analytic, record_op(r, topo), topo,
                         with_record_version(profile, r), r.gpus_per_thread);
}

namespace {

using Matrix = std::vector<std::vector<double>>;

// The records' clusters (one per node count) and ops, built once.
// A direct all_to_all record's cost is computed from one routing of its pairs (DirectExchangeCost)
// and shared by the records of the same group on the same cluster (one log's sizes): the analytic
// tier would route them again under every profile whose link efficiencies or latencies differ,
// which is every step of the search (a million pairs at 256 Polaris nodes).
struct RecordSetup {
  std::map<int, std::shared_ptr<const Topology>> clusters;
  std::vector<CollectiveOp> ops;
  std::vector<const Topology*> topo_of;
  std::vector<std::shared_ptr<const DirectExchangeCost>> direct_of;  // null: the analytic tier
};

bool is_direct_exchange(const CollectiveOp& op, const Topology& topo) {
  return op.kind == CollKind::AllToAll && op.groups.size() == 1 &&
         select_algorithm(op, topo) == Algorithm::Direct;
}

RecordSetup record_setup(const std::vector<CollectiveRecord>& records, const std::string& cluster) {
  RecordSetup s;
  std::map<std::pair<const Topology*, std::vector<int>>, std::shared_ptr<const DirectExchangeCost>>
      direct;
  for (const CollectiveRecord& r : records) {
    auto& t = s.clusters[r.nodes];
    if (!t) t = std::make_shared<const Topology>(record_cluster(r, cluster));
    s.ops.push_back(record_op(r, *t));
    s.topo_of.push_back(t.get());
    const CollectiveOp& op = s.ops.back();
    std::shared_ptr<const DirectExchangeCost> cost;
    if (is_direct_exchange(op, *t)) {
      auto& shared = direct[{t.get(), op.groups.front()}];
      if (!shared) shared = std::make_shared<const DirectExchangeCost>(op, *t);
      cost = shared;
    }
    s.direct_of.push_back(std::move(cost));
  }
  return s;
}

// Where the Levenberg-Marquardt search stands: the point z, its predicted times t, residuals r and
// cost c, and the damping.
struct LmState {
  std::vector<double> z, t, r;
  double c = 0, lambda = 1e-2;
};

// What one iteration's damped steps did.
enum class LmStep { None, Improved, Converged };

// The least-squares problem: the records' times predicted for a point z of the unbounded space
// (see the top of this file), and the residuals against the measured times.
class CollectiveProblem {
 public:
  CollectiveProblem(const std::vector<CollectiveRecord>& records, const CostProfile& base,
                    const RecordSetup& setup, std::vector<CollectiveParam> params,
                    CollectiveLoss loss)
      : records_(records),
        base_(base),
        setup_(setup),
        params_(std::move(params)),
        loss_(loss),
        P_(params_.size()),
        N_(records.size()),
        z0_(P_) {
    for (std::size_t j = 0; j < P_; ++j) z0_[j] = z_at(j, params_[j].base);
  }

  // The search from the base values, the parameters named in `moved` moved to their values.
  LmState start(const std::map<std::string, double>& moved = {}) const {
    LmState s;
    s.z = z0_;
    for (std::size_t j = 0; j < P_; ++j)
      if (const auto it = moved.find(params_[j].key); it != moved.end())
        s.z[j] = z_at(j, it->second);
    s.t = predict(s.z);
    s.r = residuals(s.z, s.t);
    s.c = cost(s.r);
    return s;
  }

  // Levenberg-Marquardt iterations from `s` until no damped step improves or the gain is below
  // 1e-6 (counted past the limit); returns the iteration count. Each iteration is told to
  // `progress` with the cost and the evaluations of every record's time so far.
  int minimize(LmState& s, const FitProgress& progress, const char* search) const {
    int it = 0;
    for (; it < kMaxIterations; ++it) {
      if (progress)
        progress(
            fmt::format("calibrate fit: {} search, iteration {}, cost {:.6g}, {} evaluations "
                        "of {} records",
                        search, it + 1, s.c, evaluations_, N_));
      const Matrix J = jacobian(s);
      const Matrix A = gram(J, N_ + P_);
      std::vector<double> g(P_, 0.0);
      for (std::size_t i = 0; i < N_ + P_; ++i)
        for (std::size_t a = 0; a < P_; ++a) g[a] -= J[i][a] * s.r[i];
      const LmStep step = damped_step(A, g, s);
      if (step == LmStep::None) break;
      if (step == LmStep::Converged) it = kMaxIterations;
    }
    return it;
  }

  // The records' part of the cost (without the prior's pull).
  double records_cost(const std::vector<double>& r) const {
    double s = 0;
    for (std::size_t i = 0; i < N_; ++i) s += r[i] * r[i];
    return s;
  }

  // The parameters at z, each marked when it ends within 1% of its range's ends.
  std::vector<CollectiveParam> fitted(const std::vector<double>& z) const {
    std::vector<CollectiveParam> params = params_;
    for (std::size_t j = 0; j < P_; ++j) {
      params[j].value = value_of(z, j);
      const double w = params[j].hi - params[j].lo;
      params[j].at_bound =
          params[j].value - params[j].lo < 0.01 * w || params[j].hi - params[j].value < 0.01 * w;
    }
    return params;
  }

  // Sensitivity: the predictions' mean relative change for a 10% change of each parameter (the
  // larger of up and down, each clamped to its range), at the fitted point; a parameter nothing
  // moves is not informed by the records.
  void set_sensitivities(const CostProfile& fitted_profile, const std::vector<double>& t,
                         std::vector<CollectiveParam>& params) const {
    for (std::size_t j = 0; j < P_; ++j) {
      double worst = 0;
      for (double f : {1.1, 0.9}) {
        const CollectiveParam& c = params[j];
        const std::vector<double> tj =
            times_with(fitted_profile, params, j,
                       std::clamp(c.value == 0 ? 0.1 * (f - 1) * 10 : c.value * f, c.lo, c.hi));
        double s = 0;
        for (std::size_t i = 0; i < N_; ++i) s += std::fabs(tj[i] - t[i]) / t[i];
        worst = std::max(worst, s / static_cast<double>(N_));
      }
      params[j].sensitivity = worst;
      params[j].informed = params[j].sensitivity > 1e-6;
    }
  }

  // The informed parameters' pairs the records determine only together (ConfoundedPair). The
  // Jacobian is of the records' log times with respect to each parameter as a fraction of its
  // range; correlations do not depend on that scaling.
  std::vector<ConfoundedPair> confounded(const CostProfile& fitted_profile,
                                         const std::vector<double>& t,
                                         const std::vector<CollectiveParam>& params) const {
    std::vector<std::size_t> idx;
    for (std::size_t j = 0; j < P_; ++j)
      if (params[j].informed) idx.push_back(j);
    const std::size_t K = idx.size();
    Matrix J(N_, std::vector<double>(K, 0.0));
    for (std::size_t a = 0; a < K; ++a) {
      const CollectiveParam& c = params[idx[a]];
      const double h = (c.hi - c.value >= c.value - c.lo ? 1e-3 : -1e-3);  // towards the interior
      const std::vector<double> tj =
          times_with(fitted_profile, params, idx[a], c.value + h * (c.hi - c.lo));
      for (std::size_t i = 0; i < N_; ++i) J[i][a] = std::log(tj[i] / t[i]) / h;
    }
    Matrix F = gram(J, N_);
    // The estimates' covariance up to a factor: F's inverse, column by column (a tiny ridge keeps
    // an exactly degenerate F invertible; its correlations then tend to +-1).
    for (std::size_t a = 0; a < K; ++a) F[a][a] *= 1 + 1e-9;
    Matrix C(K);
    for (std::size_t b = 0; b < K; ++b) {
      std::vector<double> e(K, 0.0);
      e[b] = 1;
      C[b] = solve(F, e);  // F symmetric: column b of the inverse
    }
    std::vector<ConfoundedPair> out;
    for (std::size_t a = 0; a < K; ++a)
      for (std::size_t b = a + 1; b < K; ++b) {
        const double r = C[a][b] / std::sqrt(std::fabs(C[a][a] * C[b][b]));
        if (std::fabs(r) >= kConfounded)
          out.push_back({params[idx[a]].key, params[idx[b]].key, std::clamp(r, -1.0, 1.0)});
      }
    return out;
  }

 private:
  // The records' times under `profile` with params set, parameter j moved to `value`.
  std::vector<double> times_with(const CostProfile& profile, std::vector<CollectiveParam> params,
                                 std::size_t j, double value) const {
    params[j].value = value;
    CostProfile p = profile;
    set_collective_params(p, params);
    return times(p);
  }

  // The point of parameter j at `value`. A value on its range's bound starts 1% inside it: at the
  // bound the sigmoid's slope is ~0 and no step could move the parameter (an optional term absent
  // from the base profile).
  double z_at(std::size_t j, double value) const {
    return logit(std::clamp((value - params_[j].lo) / (params_[j].hi - params_[j].lo), 0.01, 0.99));
  }

  double value_of(const std::vector<double>& z, std::size_t j) const {
    return params_[j].lo + (params_[j].hi - params_[j].lo) * sigmoid(z[j]);
  }

  // The records' times under p, as nccl_tests_time on the analytic tier gives them: one network
  // per cluster for all its records, on the plans of that fabric under p (kept across calls, so a
  // step that moves no parameter the plans read plans nothing again); a direct all_to_all from its
  // DirectExchangeCost.
  std::vector<double> times(const CostProfile& p) const {
    Engine engine;
    // Per NCCL release a record names, p with that release (declared before the networks that
    // hold them, so it outlives them).
    std::map<std::string, CostProfile> by_version;
    std::map<std::pair<const Topology*, std::string>, std::unique_ptr<AnalyticNetwork>> nets;
    std::vector<double> t(N_);
    for (std::size_t i = 0; i < N_; ++i) {
      const Topology& topo = *setup_.topo_of[i];
      const std::string& version = records_[i].nccl_version;
      const CostProfile* rp = &p;
      if (!version.empty()) {
        auto it = by_version.find(version);
        if (it == by_version.end())
          it = by_version.emplace(version, with_record_version(p, records_[i])).first;
        rp = &it->second;
      }
      double op_s = 0;
      if (const DirectExchangeCost* direct = setup_.direct_of[i].get()) {
        op_s = direct->time_s(*rp, setup_.ops[i].bytes);
      } else {
        std::unique_ptr<AnalyticNetwork>& net = nets[{&topo, version}];
        if (!net)
          net = std::make_unique<AnalyticNetwork>(engine, topo, *rp, false, plans_.get(topo, *rp));
        op_s = net->op_cost(setup_.ops[i]).first;
      }
      t[i] = std::max(op_s, records_[i].gpus_per_thread * p.nccl.host_launch_s);
    }
    ++evaluations_;
    return t;
  }

  std::vector<double> predict(const std::vector<double>& z) const {
    CostProfile p = base_;
    std::vector<CollectiveParam> cur = params_;
    for (std::size_t j = 0; j < P_; ++j) cur[j].value = value_of(z, j);
    set_collective_params(p, cur);
    return times(p);
  }

  // The relative time errors through the loss, then the weak prior's pull towards the base values.
  std::vector<double> residuals(const std::vector<double>& zz, const std::vector<double>& t) const {
    std::vector<double> r(N_ + P_);
    for (std::size_t i = 0; i < N_; ++i) {
      const double e = (t[i] - records_[i].time_s) / records_[i].time_s;
      r[i] = loss_ == CollectiveLoss::Squared
                 ? e
                 : std::copysign(kCauchyScale *
                                     std::sqrt(std::log1p((e / kCauchyScale) * (e / kCauchyScale))),
                                 e);
    }
    for (std::size_t j = 0; j < P_; ++j) r[N_ + j] = kPrior * (zz[j] - z0_[j]);
    return r;
  }

  static double cost(const std::vector<double>& r) {
    double s = 0;
    for (double x : r) s += x * x;
    return s;
  }

  // Jacobian by forward differences.
  Matrix jacobian(const LmState& s) const {
    Matrix J(N_ + P_, std::vector<double>(P_, 0.0));
    for (std::size_t j = 0; j < P_; ++j) {
      std::vector<double> zj = s.z;
      const double h = 1e-3;
      zj[j] += h;
      const std::vector<double> rj = residuals(zj, predict(zj));
      for (std::size_t i = 0; i < N_ + P_; ++i) J[i][j] = (rj[i] - s.r[i]) / h;
    }
    return J;
  }

  // Up to 12 steps of growing damping on the normal equations A step = g; the first that lowers
  // the cost is taken (and the damping lowered).
  LmStep damped_step(const Matrix& A, const std::vector<double>& g, LmState& s) const {
    for (int tries = 0; tries < 12; ++tries) {
      Matrix D = A;
      for (std::size_t a = 0; a < P_; ++a) D[a][a] += s.lambda * (A[a][a] + 1e-9);
      const std::vector<double> step = solve(D, g);
      std::vector<double> zn = s.z;
      for (std::size_t a = 0; a < P_; ++a) zn[a] += std::clamp(step[a], -3.0, 3.0);
      const std::vector<double> tn = predict(zn);
      const std::vector<double> rn = residuals(zn, tn);
      const double cn = cost(rn);
      if (cn < s.c) {
        const double gain = (s.c - cn) / s.c;
        s.z = zn;
        s.t = tn;
        s.r = rn;
        s.c = cn;
        s.lambda = std::max(s.lambda / 3, 1e-7);
        return gain < 1e-6 ? LmStep::Converged : LmStep::Improved;
      }
      s.lambda *= 4;
    }
    return LmStep::None;
  }

  const std::vector<CollectiveRecord>& records_;
  const CostProfile& base_;
  const RecordSetup& setup_;
  const std::vector<CollectiveParam> params_;  // at their base values
  const CollectiveLoss loss_;
  const std::size_t P_, N_;
  std::vector<double> z0_;  // the base values' point
  mutable FabricPlanCache plans_;
  mutable long evaluations_ = 0;  // evaluations of every record's time (for progress)
};

}  // namespace

namespace {

// 0.99 x the least time per ring step among the records of rings whose nodes span several of the
// fabric's groups (all_gather, reduce_scatter: always a ring of ranks - 1 steps; an all_reduce
// may run a tree), in us; 0 when
// the base profile has no groups, its group step is already set, or no record spans groups.
double group_step_start_us(const std::vector<CollectiveRecord>& records, const CostProfile& base) {
  const NcclParams& n = base.nccl;
  if (n.group_nodes == 0 || n.group_step_s > 0) return 0;
  double least = 0;
  for (const CollectiveRecord& r : records) {
    if (r.nodes <= n.group_nodes || r.ranks < 2) continue;
    if (r.op != "all_gather" && r.op != "reduce_scatter") continue;
    const double per_step = r.time_s / (r.ranks - 1.0);
    least = least == 0 ? per_step : std::min(least, per_step);
  }
  return 0.99 * least * 1e6;
}

}  // namespace

CollectiveLoss parse_collective_loss(const std::string& s) {
  if (s == "cauchy") return CollectiveLoss::Cauchy;
  if (s == "squared") return CollectiveLoss::Squared;
  throw InputError("<command line>", "--loss",
                   fmt::format("unknown loss '{}' (known: cauchy, squared)", s));
}

const char* collective_loss_name(CollectiveLoss l) {
  return l == CollectiveLoss::Cauchy ? "cauchy" : "squared";
}

CollectiveFit fit_collectives(const std::vector<CollectiveRecord>& records, const CostProfile& base,
                              const std::string& cluster, CollectiveLoss loss,
                              const FitProgress& progress) {
  if (records.empty()) throw InputError("<measurements>", "", "no collective records to fit");
  const RecordSetup setup = record_setup(records, cluster);
  // NCCL runs LL and LL128 below a few MiB: records above say nothing about their latencies, which
  // then stay at the base values rather than absorb what the larger sizes show.
  bool small = false;
  for (const CollectiveRecord& r : records) small = small || r.bytes <= kSmallRecordBytes;
  const std::vector<CollectiveParam> fit_params = collective_params(base, small);
  const CollectiveProblem problem(records, base, setup, fit_params, loss);
  // The group step is a floor on every step of a ring across groups: below the steps' latencies
  // it moves no record, so the search starts it just under the cheapest step such a record shows
  // (its time over its ring steps), where it binds.
  const double group_start_us = group_step_start_us(records, base);
  std::map<std::string, double> moved;
  if (group_start_us > 0) moved["nccl/group_step_us"] = group_start_us;
  LmState s = problem.start(moved);
  CollectiveFit out;
  out.iterations = problem.minimize(s, progress, "first");
  // The host's launches are a floor: below the records' times they move nothing, so a search from
  // a base under them never finds them. A second search starts the floor just under the fastest
  // record (per GPU its thread launches) and wins if it fits the records better; it is skipped
  // when that start lies above the floor's range, where no value in range reaches any record.
  double fastest = records.front().time_s / records.front().gpus_per_thread;
  for (const CollectiveRecord& r : records)
    fastest = std::min(fastest, r.time_s / r.gpus_per_thread);
  const double floor_us = 0.99 * fastest * 1e6;
  const auto host = std::find_if(fit_params.begin(), fit_params.end(),
                                 [](const auto& c) { return c.key == "nccl/host_launch_us"; });
  if (host != fit_params.end() && floor_us < host->hi) {
    moved[host->key] = floor_us;
    LmState floored = problem.start(moved);
    const int floored_iterations = problem.minimize(floored, progress, "host-floor");
    if (problem.records_cost(floored.r) < problem.records_cost(s.r)) {
      s = floored;
      out.iterations = floored_iterations;
    }
  }
  out.profile = base;
  std::vector<CollectiveParam> params = problem.fitted(s.z);
  set_collective_params(out.profile, params);
  out.predicted_s = s.t;
  problem.set_sensitivities(out.profile, s.t, params);
  out.confounded = problem.confounded(out.profile, s.t, params);
  out.params = params;
  const std::size_t N = records.size();
  for (std::size_t i = 0; i < N; ++i) {
    const double e = std::fabs(s.t[i] - records[i].time_s) / records[i].time_s;
    out.mean_abs_rel_err += e / static_cast<double>(N);
    out.worst_abs_rel_err = std::max(out.worst_abs_rel_err, e);
  }
  return out;
}

}  // namespace zerosim::calib
