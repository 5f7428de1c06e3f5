// Program building: the machinery every strategy family's lowering uses to write rank 0's
// StepProgram, and nothing of any strategy's policy. Streams; events (record, wait, after, join);
// compute, kernel and collective ops with their label pieces and prefixes; the group lists of rank
// layouts (through the context's GroupListCache); collective classes (StepProgram::
// collective_class); the modules and their compute times (noted per op for retime_lowered_step);
// the optimizer step on the local shard. A family's lowering (lower_deepspeed.cpp: ZeRO stages 1-3,
// HSDP, ZeRO++, offload; lower_fsdp.cpp: PyTorch FSDP) derives from ProgramBuilder and decides
// which ops run on which stream in which order. Private to the step module.
#pragma once
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/step/lower.hpp"

namespace zerosim::lowering {

// The compute stream, the first of every program (retime_lowered_step reads it); each lowering
// opens its other streams.
inline constexpr int kCompute = 0;

// Decimal digits of a non-negative int, as std::to_string writes them, without a string.
class Digits {
 public:
  explicit Digits(int v) : end_(std::to_chars(buf_, buf_ + sizeof buf_, v).ptr) {}
  Digits(const Digits&) = delete;
  Digits& operator=(const Digits&) = delete;
  operator std::string_view() const { return {buf_, static_cast<std::size_t>(end_ - buf_)}; }

 private:
  char buf_[12];
  char* end_;
};

// Forward and backward time of each module, computed once per distinct shape (every layer's
// submodules repeat the same GEMMs, and the GEMM efficiency curve costs logarithms) and kept per
// module (passes and micro-steps ask again).
class ModuleTimes {
 public:
  void reset(const std::vector<Module>& modules, const CostProfile& prof, AttentionImpl attention);
  std::pair<double, double> operator()(int i) {
    auto& t = times_[static_cast<std::size_t>(i)];
    if (t.first >= 0) return t;
    return t = compute(i);
  }
  // Per module: bit 0 set when its forward time is positive, bit 1 when its backward time is.
  std::vector<std::uint8_t> signs();

 private:
  std::pair<double, double> compute(int i);
  const std::vector<Module>* modules_ = nullptr;
  const CostProfile* prof_ = nullptr;
  AttentionImpl attention_ = AttentionImpl::Eager;
  std::vector<std::pair<const Module*, std::pair<double, double>>> shapes_;
  std::vector<std::pair<double, double>> times_;  // per module; negative: not known yet
};

// The modules of (model, tokens, seq): the cache's, or built afresh.
std::shared_ptr<const std::vector<Module>> modules_of(const StepSetup& s, ModuleCache* cache);

class ProgramBuilder {
 protected:
  // Opens the compute stream (kCompute).
  ProgramBuilder(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                 ModuleCache* modules, GroupListCache* groups, LoweredStep& out);

  // The step's modules (out_.modules), their label pieces (name_piece_, made before any other
  // piece) and compute times. Called once, after the capacities are reserved.
  void load_modules();
  void name_modules();
  // Capacities up front (growing the vectors op by op was a tenth of lowering): ops per stream,
  // labels, prefixes, pieces, collectives.
  void reserve(std::size_t ops, std::size_t prefixes, std::size_t pieces, std::size_t collectives);
  std::int64_t total_params() const;

  int add_stream(const char* name) {
    prog_.streams.push_back({name, {}});
    timed_.push_back(0);
    out_.collective_slots.emplace_back();
    return static_cast<int>(prog_.streams.size()) - 1;
  }
  int event() { return prog_.event_count++; }
  // The framework's host thread (the Python process that runs the training loop and dispatches
  // every PyTorch op) as a stream of its own, opened on first use: its ops are host time, in
  // program order. GPU work the host launches late waits for an event recorded on it; the host
  // waits for GPU events where the framework synchronizes.
  int host_stream() {
    if (host_stream_ < 0) host_stream_ = add_stream("host");
    return host_stream_;
  }
  // `ops` eager PyTorch ops dispatched on the host thread, CostProfile::host_op_s each.
  void host_dispatch(double ops, Category c, int pre, const char* suffix) {
    compute(host_stream(), c, ops * prof_.host_op_s, pre, suffix);
  }
  // `to` starts its next op after everything issued on `from` so far.
  void after(int from, int to) {
    const int ev = event();
    record(from, ev);
    wait(to, ev);
  }
  // The compute stream waits for everything issued on `stream` so far.
  void join(int stream) { after(stream, kCompute); }
  void record(int stream, int ev) {
    if (ev >= 0) push(stream, StepOp{OpKind::Record, Category::Other, 0, -1, ev, -1});
  }
  void wait(int stream, int ev) {
    if (ev >= 0) push(stream, StepOp{OpKind::Wait, Category::Other, 0, -1, ev, -1});
  }

  // Label pieces, prefixes and labels, or -1 each when the step is lowered without labels.
  int piece(std::initializer_list<std::string_view> parts) {
    return s_.labels ? prog_.add_piece(parts) : -1;
  }
  int prefix(int head, int tail = -1) { return s_.labels ? prog_.add_prefix(head, tail) : -1; }
  // suffix: a string literal (OpLabel keeps the pointer).
  int label(int pre, const char* suffix) {
    if (!s_.labels) return -1;
    prog_.labels.push_back(OpLabel{pre, suffix});
    return static_cast<int>(prog_.labels.size()) - 1;
  }
  // The prefix of module i's run in a pass whose label piece is `phase_piece` ("mb0.fwd.").
  int module_prefix(int phase_piece, int module) {
    return prefix(phase_piece, name_piece_[static_cast<std::size_t>(module)]);
  }

  void compute(int stream, Category c, double seconds, int pre, const char* suffix) {
    if (seconds <= 0) return;
    push(stream, StepOp{OpKind::Compute, c, seconds, -1, -1, label(pre, suffix)});
  }
  // kname: a string literal; its cost is looked up once per lowering.
  void kernel(int stream, Category c, const char* kname, double bytes, int pre,
              const char* suffix) {
    if (bytes <= 0) return;
    push(stream,
         StepOp{OpKind::Kernel, c, kernel_cost(kname).time(bytes), -1, -1, label(pre, suffix)});
  }
  // A module's compute op (forward, recompute or backward), noted for retime_lowered_step.
  void module_compute(Category c, int module, bool backward, int pre, const char* suffix) {
    const auto [fwd, bwd] = times_(module);
    const double seconds = backward ? bwd : fwd;
    if (seconds <= 0) return;
    out_.module_ops.push_back(LoweredStep::ModuleOp{
        static_cast<int>(prog_.streams[kCompute].ops.size()), module, backward});
    compute(kCompute, c, seconds, pre, suffix);
  }
  // A collective over `groups` (shared: an op costs no copy of its groups). The op's label stays
  // in the program (CollectiveOp::label is left empty: one string less per collective); its step
  // phase goes to LoweredStep::collective_phase. Nothing when no group has two ranks or no bytes.
  void collective(int stream, CollKind kind, Algorithm algo, const GroupList& groups, double bytes,
                  Category c, CommPhase phase, int pre, const char* suffix);
  // Adam on the local shard of `part` parameters (out_.optimizer_bytes, 28 bytes each) on the
  // compute stream, labelled `pre`.
  void gpu_optimizer(double part, int pre);

  // The group list of a layout: the context's, or built afresh.
  template <class Build>
  GroupList layout_groups(GroupListCache::Layout what, int gpus, int per_node, int k, Build build) {
    return group_cache_ ? group_cache_->get(what, gpus, per_node, k, build) : GroupList(build());
  }
  GroupList world_groups();
  // Groups of k consecutive ranks: within each node (k <= GPUs per node) or spanning nodes.
  GroupList block_groups(int k);
  // Groups of the ranks at the same position in consecutive blocks of k (the replicas of HSDP).
  GroupList strided_groups(int k);
  GroupList node_groups();  // one group per node (k = GPUs per node)
  // A strategy's shard and replica groups: S = shard_ranks consecutive ranks share a parameter
  // shard, and the ranks at the same position of each group are replicas (none where S is the
  // world: HSDP, HYBRID_SHARD, FSDP2 on a 2-D mesh).
  struct ShardGroups {
    int size = 1;  // S
    GroupList shard, replicas;
    Algorithm algo = Algorithm::Ring;  // the shard groups' collectives: NVLink within a node
  };
  ShardGroups shard_groups();
  GroupList rail_groups();  // the ranks of the same local index across nodes

  const StepSetup& s_;
  const Strategy& st_;
  const CostProfile& prof_;
  const Topology& topo_;
  ModuleCache* module_cache_;
  GroupListCache* group_cache_;
  LoweredStep& out_;
  StepProgram& prog_;
  int W_ = 1, N_ = 1;            // world, GPUs per node
  std::vector<int> name_piece_;  // per module: the piece of its name

 private:
  void push(int stream, StepOp op) {
    const auto s = static_cast<std::size_t>(stream);
    timed_[s] += op.kind != OpKind::Record && op.kind != OpKind::Wait;
    prog_.streams[s].ops.push_back(op);
  }
  const KernelCost& kernel_cost(const char* kname) {
    for (const auto& [n, k] : kernels_)
      if (n == kname) return *k;
    kernels_.emplace_back(kname, &prof_.kernel(kname));
    return *kernels_.back().second;
  }
  // Collective classes by what a cost depends on (StepProgram::collective_class).
  struct ClassKey {
    const GroupList::Groups* groups;
    CollKind kind;
    Algorithm algorithm;
    double bytes;
    bool operator==(const ClassKey&) const = default;
  };
  struct ClassKeyHash {
    std::size_t operator()(const ClassKey& k) const {
      std::uint64_t h = std::bit_cast<std::uint64_t>(k.bytes) * 0x9E3779B97F4A7C15ull;
      h ^= reinterpret_cast<std::uintptr_t>(k.groups) >> 4;
      h ^= static_cast<std::uint64_t>(k.kind) << 7 ^ static_cast<std::uint64_t>(k.algorithm) << 11;
      return static_cast<std::size_t>(h * 0xFF51AFD7ED558CCDull >> 32);
    }
  };
  std::unordered_map<ClassKey, int, ClassKeyHash> classes_;
  std::vector<std::pair<const char*, const KernelCost*>> kernels_;
  std::vector<int> timed_;  // per stream: timed ops pushed so far
  int host_stream_ = -1;    // host_stream(); -1: not opened
  ModuleTimes times_;
};

// The families' lowerings (one file each), called by lower_step.
void lower_deepspeed(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                     ModuleCache* modules, GroupListCache* groups, LoweredStep& out);
void lower_fsdp(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                ModuleCache* modules, GroupListCache* groups, LoweredStep& out);
void lower_fsdp2(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                 ModuleCache* modules, GroupListCache* groups, LoweredStep& out);

}  // namespace zerosim::lowering
