// Lowering: the shape of the StepProgram (which
// collectives, how many, on which groups) for ZeRO-3 and each ZeRO++ component.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/step/lower.hpp"
#include "sim/strategy/fetch_trace.hpp"
#include "sim/strategy/quant_groups.hpp"
#include "sim/topology/topology.hpp"
#include "tests/step/gpt18b_setup.hpp"
#include "tests/support/approx.hpp"

using namespace zerosim;

namespace {
struct Counts {
  int world_ag = 0, hpz_ag = 0, rs = 0, a2a_intra = 0, a2a_rail = 0, kernels = 0;
  int cats = 0;         // stage 3's re-assembly copies (Category::ParamFetch kernels)
  double host_ops = 0;  // ops the host stream dispatches for the gathers (its time / host_op_s)
  double grad_host_ops = 0;  // and for the gradients (".ipg.host", ".reduce.host")
  double ipg_host_ops = 0;   // of which the gradient hooks' (".ipg.host")
  // The gradient path's copy kernels: count and time, by label suffix.
  int ipg_copies = 0, interleave_cats = 0, predivides = 0;
  double grad_copy_s = 0;
  std::shared_ptr<const std::vector<Module>> modules;
};
Counts count(const std::string& strategy, int nodes, int grad_accum = 1,
             const char* version = "0.19", const std::function<void(Strategy&)>& tweak = {}) {
  auto topo = load_cluster("dgx2-v100", ClusterOverrides{nodes, 0, 0, "", 0});
  auto prof = select_cost_profile("", topo);
  StepSetup setup = gpt18b_setup(strategy, 1024, 512, grad_accum);
  setup.strategy.deepspeed_version = parse_deepspeed_version(version);
  if (tweak) tweak(setup.strategy);
  auto low = lower_step(setup, topo, prof);
  Counts c;
  for (const auto& op : low.program.collectives) {
    if (op.kind == CollKind::AllGather) (op.groups.size() == 1 ? c.world_ag : c.hpz_ag)++;
    if (op.kind == CollKind::ReduceScatter) c.rs++;
    if (op.kind == CollKind::AllToAll)
      (op.groups.size() == static_cast<std::size_t>(nodes) ? c.a2a_intra : c.a2a_rail)++;
  }
  c.modules = low.modules;
  auto ends = [](const std::string& t, const std::string& x) {
    return t.size() >= x.size() && t.compare(t.size() - x.size(), x.size(), x) == 0;
  };
  for (const auto& s : low.program.streams)
    for (const auto& op : s.ops) {
      const std::string label = low.program.label_text(op.label);
      if (s.name == "host") {
        (ends(label, ".ipg.host") || ends(label, ".reduce.host") ? c.grad_host_ops : c.host_ops) +=
            op.duration_s / prof.host_op_s;
        if (ends(label, ".ipg.host")) c.ipg_host_ops += op.duration_s / prof.host_op_s;
      }
      const bool ipg = ends(label, ".ipg_copy"), icat = ends(label, ".interleave_cat"),
                 div = ends(label, ".predivide");
      c.ipg_copies += ipg;
      c.interleave_cats += icat;
      c.predivides += div;
      if (ipg || icat || div) c.grad_copy_s += op.duration_s;
      const bool cat = op.kind == OpKind::Kernel && op.category == Category::ParamFetch;
      c.cats += cat;
      c.kernels += op.kind == OpKind::Kernel && !cat && !(ipg || icat || div);
    }
  return c;
}
}  // namespace

TEST_CASE("program shape per strategy (gpt-18b: 162 modules)") {
  // Embedding, 4 submodules (qkv, attention, fc1, fc2) per layer for 40 layers, head: DeepSpeed
  // gathers per submodule.
  constexpr int M = 1 + 4 * 40 + 1;
  // Backward (DeepSpeed's stage3_max_reuse_distance 1e9, fetch_trace): each layer's submodules
  // are gathered for the recompute and kept for their backwards; the head's backward follows its
  // forward, and the last layer's qkv, fc1 and fc2 are kept from the forward to their recompute
  // (at most 0.96e9 parameters run in between: the rest of the layer, the head twice, the
  // layer's earlier recomputes): M - 4 gathers.
  constexpr int B = M - 4;
  // Without prefetch (stage3_prefetch_bucket_size 0, as the paper's configs) each run's own hook
  // fetches its module with one call (the calls of a prefetch: the tests below).
  const auto no_prefetch = [](Strategy& s) { s.prefetch_bucket_elems = 0; };
  auto z3 = count("zero3", 24, 1, "0.19", no_prefetch);
  CHECK(z3.world_ag == M + B);
  CHECK(z3.hpz_ag == 0);
  CHECK(z3.a2a_intra + z3.a2a_rail == 0);
  CHECK(z3.kernels == 0);
  // AllGatherCoalescedHandle.wait cats every gathered parameter of a module of two or more
  // tensors (all of gpt-18b's): one copy per gather.
  CHECK(z3.cats == M + B);
  // hpZ under 0.10.0 reads its intra-node copy only in the backward hooks: every forward and
  // every recompute (which runs the forward hooks) gathers across all ranks. Of the B
  // backward-pass gathers all but the embedding's (gathered again by its own backward) are
  // recomputes.
  auto hpz = count("zero3+hpz", 24, 2, "0.10.0", no_prefetch);
  CHECK(hpz.world_ag == 2 * (M + B - 1));
  CHECK(hpz.hpz_ag == 2);
  // 0.10.2-0.13.1: micro-step 1's checkpointed layers (4 x 40 modules) run their forward under
  // no_grad and read the copy; the embedding and the head still gather across all ranks.
  auto grad_enabled = count("zero3+hpz", 24, 2, "0.10.2", no_prefetch);
  CHECK(grad_enabled.world_ag == M + 2 * (B - 1) + 2);
  CHECK(grad_enabled.hpz_ag == 2 + 4 * 40);
  // 0.13.2 on: every gather reads the copy once it exists; micro-step 0's forward crosses nodes
  // except for the tied head (its word embedding's copy was made by the embedding's release).
  auto present = count("zero3+hpz", 24, 2, "0.19", no_prefetch);
  CHECK(present.world_ag == M - 1);
  CHECK(present.hpz_ag == 1 + 2 * B + M);
  auto qwz = count("zero3+qwz", 24, 1, "0.19", no_prefetch);
  CHECK(qwz.kernels == 2 * (M + B));  // quantize + dequantize per gather
  auto qgz = count("zero3+qgz", 24);
  CHECK(qgz.a2a_intra == qgz.a2a_rail);
  CHECK(qgz.a2a_intra > 0);
  // Per quantized tensor two all-to-alls a hop (data, scales) and three kernels: swizzle-quant,
  // dequant-reduce-quant, dequant-reduce.
  CHECK(2 * qgz.kernels == 3 * qgz.a2a_intra);
  auto one = count("zero3+qgz", 1);
  CHECK(one.a2a_intra + one.a2a_rail == 0);  // one node: the FP16 reduce-scatter
  CHECK(one.rs == count("zero3", 1).rs);
}

TEST_CASE("qgZ reduces each gradient tensor on its own, by release (gpt-18b ZeRO++, 24 nodes)") {
  // coalesced_collectives.py all_to_all_quant_reduce: per tensor of every bucket, a 1-D tensor
  // (and from 0.13.2 one whose size does not divide by 2 x 384) gets its own reduce-scatter, every
  // other one four all-to-alls (data and scales inside the node, then across it).
  constexpr std::int64_t W = 384;
  for (const char* version : {"0.10.0", "0.13.2", "0.19"}) {
    CAPTURE(version);
    const auto c = count("zeropp", 24, 1, version);
    const bool divisibility = std::string(version) != "0.10.0";
    int quantized = 0, fallback = 0;
    for (const Module& m : *c.modules)
      for (const ParamTensor& p : m.params) {
        const bool q = !p.one_d && (!divisibility || p.elems % (2 * W) == 0);
        (q ? quantized : fallback)++;
      }
    CHECK(c.a2a_intra == 2 * quantized);
    CHECK(c.a2a_rail == 2 * quantized);
    CHECK(c.rs == fallback);
    // gpt-18b: 40 layers of four 2-D weights and eight 1-D tensors (biases, two LayerNorms), and
    // the embeddings and final norm: about 640 all-to-alls and 320 reduce-scatters per step.
    CHECK(c.a2a_intra + c.a2a_rail >= 4 * 4 * 40);
    CHECK(c.a2a_intra + c.a2a_rail <= 4 * (4 * 40 + 2));
    CHECK(c.rs >= 8 * 40);
    CHECK(c.rs <= 8 * 40 + 4);
  }
}

TEST_CASE("qgZ's scale all-to-alls carry DeepSpeed's groups per tensor shape") {
  // all_to_all_quant_reduce: per quantized tensor of n elements, intra-node the INT4 data (n / 2
  // bytes) and max(rows, cols, 384) FP32 scales; across nodes a sixteenth of the data and
  // max(rows, cols, 384) // 16 scales. In the buckets' tensor order.
  auto topo = load_cluster("dgx2-v100", ClusterOverrides{24, 0, 0, "", 0});
  auto prof = select_cost_profile("", topo);
  const auto low = lower_step(gpt18b_setup("zeropp", 1024, 512, 1), topo, prof);
  std::vector<const CollectiveOp*> a2a;
  for (const auto& op : low.program.collectives)
    if (op.kind == CollKind::AllToAll) a2a.push_back(&op);
  std::size_t i = 0;
  for (const GradBucket& b : low.buckets)
    for (const BucketTensor& t : b.tensors) {
      if (!t.quantized) continue;
      REQUIRE(i + 4 <= a2a.size());
      const double n = static_cast<double>(t.elems);
      const double G = static_cast<double>(std::max<std::int64_t>(t.max_dim, 384));
      CHECK(t.max_dim >= 6144);
      CHECK(a2a[i]->bytes == n / 2);
      CHECK(a2a[i + 1]->bytes == 4 * G);
      CHECK(a2a[i + 2]->bytes == n / 32);
      CHECK(a2a[i + 3]->bytes == 4 * std::floor(G / 16));
      i += 4;
    }
  CHECK(i == a2a.size());
}

TEST_CASE("qwZ gathers the INT8 data and then the FP32 scales, with two all-gathers per fetch") {
  // partition_parameters.py all_gather_coalesced, quantized branch: all_gather_into_tensor of the
  // INT8 flat buffer, then of the scales (one FP32 per group of CUDAQuantizer.quantize's count for
  // the rank's flat shard, from each of the R ranks), on both tiers (the world, and hpZ's
  // intra-node group). Every gpt-18b tensor divides by 384, so the shard is n / R elements.
  for (const char* strategy : {"zero3+qwz", "zeropp"}) {
    CAPTURE(strategy);
    auto topo = load_cluster("dgx2-v100", ClusterOverrides{24, 0, 0, "", 0});
    auto prof = select_cost_profile("", topo);
    StepSetup setup = gpt18b_setup(strategy, 1024, 512, 1);
    const auto low = lower_step(setup, topo, prof);
    // The same calls in FP16: with hpZ's copy splitting them as ZeRO++'s (0.19:
    // __all_gather_params_ calls all_gather_coalesced per copy state).
    const char* fp16_strategy = std::string(strategy) == "zeropp" ? "zero3+hpz" : "zero3";
    const auto plain = lower_step(gpt18b_setup(fp16_strategy, 1024, 512, 1), topo, prof);
    std::vector<const CollectiveOp*> ag, fp16;
    for (const auto& op : low.program.collectives)
      if (op.kind == CollKind::AllGather) ag.push_back(&op);
    for (const auto& op : plain.program.collectives)
      if (op.kind == CollKind::AllGather) fp16.push_back(&op);
    // Twice ZeRO-3's gathers: each fetch's data gather followed by its scales' gather.
    REQUIRE(ag.size() == 2 * fp16.size());
    for (std::size_t i = 0; i < fp16.size(); ++i) {
      const double n = fp16[i]->bytes / 2;  // elements gathered (FP16: 2 bytes each)
      const auto R = static_cast<std::int64_t>(ag[2 * i]->groups[0].size());
      CHECK(ag[2 * i]->bytes == zerosim::testing::Approx(n).epsilon(1e-12));  // INT8
      const double groups = static_cast<double>(qwz_quant_groups(static_cast<std::int64_t>(n) / R));
      CHECK(ag[2 * i + 1]->bytes == 4 * static_cast<double>(R) * groups);
      CHECK(ag[2 * i + 1]->groups.size() == ag[2 * i]->groups.size());  // the same tier
    }
  }
}

TEST_CASE("stage 3's host dispatch per gather, as all_gather_coalesced and its handle's wait") {
  // ZeRO-3 over W = 384 ranks (partition_parameters.py): launching a gather of a module of k >= 2
  // tensors dispatches k .to()s, the flat buffer, W narrows, the cat of the own shards and the
  // all-gather (k + W + 3 ops); AllGatherCoalescedHandle.wait a narrow and a record_stream per
  // rank, a cat and a view per tensor (k (2W + 2)). A GPT layer's submodules hold 4 (norm + QKV),
  // 2, 4 (norm + fc1) and 2 tensors. Every module gathers in forward; in backward all but the
  // head and the last layer's qkv, fc1 and fc2 (kept, test above). Without prefetch: one call
  // per gathering run.
  const auto z3 = count("zero3", 24, 1, "0.19", [](Strategy& s) { s.prefetch_bucket_elems = 0; });
  constexpr double W = 384;
  auto ops = [&](double k) { return k + W + 3 + k * (2 * W + 2); };
  const double layer = ops(4) + ops(2) + ops(4) + ops(2);
  double ends = 0;  // embedding (forward and backward) and head (forward): their own tensors
  for (const Module& m : *z3.modules)
    if (m.kind != ModuleKind::Layer) {
      const auto k = static_cast<double>(m.params.size()) + (m.name == "head" ? 1 : 0);
      ends += (m.name == "head" ? 1 : 2) * (k == 1 ? 4 + 1 : ops(k));
    }
  CHECK(z3.host_ops ==
        zerosim::testing::Approx(2 * 40 * layer - ops(4) - ops(4) - ops(2) + ends).epsilon(1e-9));
}

TEST_CASE(
    "stage 3's gradient path: bucket copies, the interleaving cat, the pre-divide, host ops") {
  // ZeRO-3 gpt-18b over W = 384 ranks, one micro-step. stage3.py __add_grad_to_ipg_bucket copies
  // every gradient (all smaller than reduce_bucket_size) into the bucket's flat buffer, one copy
  // kernel per module backward (4 bytes per element), after 5 host ops per tensor.
  // reduce_scatter_coalesced per bucket of k tensors: k (W + 2) + 4 host ops (no tensor of gpt-18b
  // needs padding: all divide by 384), the cat (k > 1) and the div_, each reading and writing the
  // bucket's 2 bytes per element.
  auto topo = load_cluster("dgx2-v100", ClusterOverrides{24, 0, 0, "", 0});
  const auto prof = select_cost_profile("", topo);
  const auto low = lower_step(gpt18b_setup("zero3", 1024, 512, 1), topo, prof);
  const auto c = count("zero3", 24);
  constexpr double W = 384;
  double tensors = 0, psi = 0, host = 0, copy_s = 0;
  int cats = 0;
  const KernelCost& copy = prof.kernels.at("copy");
  for (const Module& m : *low.modules) {
    double bytes = 0;
    for (const ParamTensor& p : m.params) {
      CHECK(p.elems % 384 == 0);
      bytes += 4 * static_cast<double>(p.elems);
      psi += static_cast<double>(p.elems);
      ++tensors;
    }
    if (bytes > 0) copy_s += copy.time(bytes);
  }
  for (const GradBucket& b : low.buckets) {
    const auto k = static_cast<double>(b.tensors.size());
    host += k * (W + 2) + 4;
    if (b.tensors.size() > 1) {
      ++cats;
      copy_s += copy.time(4 * static_cast<double>(b.elems()));
    }
    copy_s += copy.time(4 * static_cast<double>(b.elems()));
  }
  CHECK(c.ipg_copies == static_cast<int>(low.modules->size()));
  CHECK(c.interleave_cats == cats);
  CHECK(c.predivides == static_cast<int>(low.buckets.size()));
  CHECK(c.grad_host_ops == zerosim::testing::Approx(5 * tensors + host).epsilon(1e-9));
  CHECK(c.grad_copy_s == zerosim::testing::Approx(copy_s).epsilon(1e-9));
  CHECK(psi == static_cast<double>(total_param_count(load_model("gpt-18b"))));
}

TEST_CASE("contiguous_gradients decides which gradients are copied into the bucket") {
  // stage3.py __add_grad_to_ipg_bucket (0.10.0, 0.13.2, 0.19.5): every gradient hook dispatches
  // the reduction stream's wait_stream; with contiguous_gradients a gradient smaller than
  // reduce_bucket_size is copied into the flat buffer (narrow, view_as, copy_, record_stream: 4
  // more ops; read and write 2 bytes per element), one copy kernel per module backward that has
  // one. gpt-18b (h = 6144) with a bucket of 1e8: QKV (3 h^2) and the MLP (4 h^2 each) are too
  // large, the attention output (h^2), the biases and norms are copied. Without
  // contiguous_gradients nothing is copied and the hooks dispatch only the wait_stream.
  constexpr std::int64_t B = 100'000'000;
  const auto bucket = [](Strategy& s) { s.reduce_bucket_elems = B; };
  const auto off = [&](Strategy& s) {
    bucket(s);
    s.contiguous_gradients = false;
  };
  const auto on = count("zero3", 24, 1, "0.19", bucket);
  const auto none = count("zero3", 24, 1, "0.19", off);
  double tensors = 0, copied = 0;
  int modules_copying = 0;
  for (const Module& m : *on.modules) {
    bool any = false;
    for (const ParamTensor& p : m.params) {
      ++tensors;
      if (p.elems < B) {
        ++copied;
        any = true;
      }
    }
    modules_copying += any;
  }
  REQUIRE(copied > 0);
  REQUIRE(copied < tensors);
  CHECK(on.ipg_copies == modules_copying);
  CHECK(on.ipg_host_ops == zerosim::testing::Approx(tensors + 4 * copied).epsilon(1e-12));
  CHECK(none.ipg_copies == 0);
  CHECK(none.ipg_host_ops == zerosim::testing::Approx(tensors).epsilon(1e-12));
  // The reductions themselves do not depend on it (reduce_scatter true: __avg_scatter_grads).
  CHECK(none.interleave_cats == on.interleave_cats);
  CHECK(none.predivides == on.predivides);
  CHECK(none.rs == on.rs);
}

TEST_CASE("collective slots name every collective op at its place among its stream's timed ops") {
  for (const char* strategy : {"zero3", "zeropp", "zero3+qgz"})
    for (bool overlap : {true, false}) {
      CAPTURE(strategy);
      CAPTURE(overlap);
      auto topo = load_cluster("dgx2-v100", ClusterOverrides{3, 4, 100, "", 0});
      StepSetup st = gpt18b_setup(strategy, 2048, 2048, 2);
      st.strategy.qgz_chunks = 2;          // a fourth stream
      st.strategy.overlap_comm = overlap;  // false: reductions on the compute stream
      const LoweredStep low = lower_step(st, topo, select_cost_profile("", topo));
      const auto& streams = low.program.streams;
      REQUIRE(low.collective_slots.size() == streams.size());
      std::size_t seen = 0;
      for (std::size_t s = 0; s < streams.size(); ++s) {
        // The stream's collective ops in order, with their positions among its timed ops.
        std::vector<std::pair<int, int>> want;
        int timed = 0;
        for (const StepOp& op : streams[s].ops) {
          if (op.kind == OpKind::Collective) want.emplace_back(timed, op.collective);
          timed += op.kind != OpKind::Record && op.kind != OpKind::Wait;
        }
        REQUIRE(low.collective_slots[s].size() == want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
          CHECK(low.collective_slots[s][i].timed == want[i].first);
          CHECK(low.collective_slots[s][i].collective == want[i].second);
        }
        seen += want.size();
      }
      CHECK(seen == low.program.collectives.size());
    }
}

// One step of gpt-18b over 24 DGX-2 nodes with every run gathering (stage3_max_reuse_distance 0,
// no checkpointing) and stage3_max_live_parameters out of reach: per all-gather its group count
// (1: the world; 24: hpZ's nodes) and bytes, the gathered elements of all modules, and the host
// ops of the gathers (launch and re-assembly).
struct StepGathers {
  std::vector<std::pair<std::size_t, double>> gathers;
  std::int64_t elems = 0;
  double host_ops = 0;
  std::shared_ptr<const std::vector<Module>> modules;
};
StepGathers step_gathers(const char* strategy, const char* version, std::int64_t bucket,
                         int grad_accum) {
  auto topo = load_cluster("dgx2-v100", ClusterOverrides{24, 0, 0, "", 0});
  auto prof = select_cost_profile("", topo);
  StepSetup setup = gpt18b_setup(strategy, 1024, 512, grad_accum);
  setup.checkpointing = false;
  setup.strategy.deepspeed_version = parse_deepspeed_version(version);
  setup.strategy.prefetch_bucket_elems = bucket;
  setup.strategy.max_live_params = std::int64_t{1} << 50;
  setup.strategy.max_reuse_distance = 0;
  const auto low = lower_step(setup, topo, prof);
  StepGathers out;
  out.modules = low.modules;
  for (const Module& m : *low.modules) out.elems += m.gather_elems;
  for (const auto& op : low.program.collectives)
    if (op.kind == CollKind::AllGather) out.gathers.emplace_back(op.groups.size(), op.bytes);
  for (const auto& s : low.program.streams)
    for (const auto& op : s.ops) {
      const std::string label = low.program.label_text(op.label);
      if (s.name == "host" && label.find(".ipg.host") == std::string::npos &&
          label.find(".reduce.host") == std::string::npos)
        out.host_ops += op.duration_s / prof.host_op_s;
    }
  return out;
}

TEST_CASE("one all_gather_coalesced per fetch_sub_module call: own fetch and prefetch set") {
  // partitioned_param_coordinator.py fetch_sub_module (0.10.0, 0.13.2, 0.19.5): a hook gathers its
  // module's unavailable parameters with one __all_gather_params call and everything it prefetches
  // with another; each is one coalesced all-gather (two under qwZ: the INT8 data, then the
  // scales). gpt-18b (h = 6144) runs 162 modules per pass: the embedding, per layer norm + QKV
  // (weight 3h^2, bias 3h), the attention output (h^2 + h), norm + fc1 (4h^2, 4h), fc2 (4h^2, h),
  // the tied head (the word embedding, then the final norm). The queue holds parameters: with a
  // bucket of 5e7 a hook pops parameters until it has started 5e7 elements, so it stops after a
  // projection's weight, and the bias goes with the next hook's call (or, for QKV 0, whose next
  // hook is its own, its own call). Hooks 0-121 start the forward's parameters, hook 121 also the
  // backward's first released ones (one call spanning both), hooks 122-161 the backward's, each
  // one call; the backward's first 41 runs (the head, layers 39-30 from fc2, whose forward runs
  // are hooks 121-161) are popped while their weights are in flight or held and fetched by their
  // own hooks; 51 backward hooks start the rest. Own calls: run 0's, QKV 0's bias, those 41.
  constexpr std::size_t layers = 40;
  const StepGathers z3 = step_gathers("zero3", "0.19", 50'000'000, 1);
  const std::size_t forward_hooks = 162, backward_hooks = 51, own = 2 + 41;
  CHECK(z3.gathers.size() == forward_hooks + backward_hooks + own);
  // The same from the coordinator's plan: a call per hook that starts a parameter, and one per
  // run with a parameter no hook started.
  {
    const auto mods = build_modules(load_model("gpt-18b"), 1024, 512);
    const auto runs = fetch_trace(mods, false, 0);
    const auto held = held_elems(runs, mods);
    const auto p = prefetch_plan(runs.data(), held.data(), runs.size(), mods, 50'000'000,
                                 std::int64_t{1} << 50);
    std::vector<char> hook(runs.size(), 0), own_call(runs.size(), 0);
    for (std::size_t j = 0; j < runs.size(); ++j)
      for (std::size_t u = p.first[j]; u < p.first[j + 1]; ++u)
        (p.by[u] >= 0 ? hook[static_cast<std::size_t>(p.by[u])] : own_call[j]) = 1;
    CHECK(std::count(hook.begin(), hook.end(), 1) == 162 + 51);
    CHECK(std::count(own_call.begin(), own_call.end(), 1) == 2 + 41);
  }
  double bytes = 0;
  for (const auto& g : z3.gathers) bytes += g.second;
  CHECK(bytes == zerosim::testing::Approx(2.0 * 2 * static_cast<double>(z3.elems)).epsilon(1e-12));
  // qwZ quantizes the call's flat shard as one tensor (all_gather_coalesced, quantized branch:
  // CUDAQuantizer.quantize of the cat of the partitions): QKV 0's hook starts the attention
  // output (weight and bias), fc1 0's norm and fc1 0's weight, a shard of 98,304 + 16 + 32 +
  // 393,216 = 491,568 elements (8 x 61,446): from ceil(491,568 / 8000) = 62, the smallest
  // divisor of 61,446 is 66 groups (of 7,448).
  const StepGathers q = step_gathers("zero3+qwz", "0.19", 50'000'000, 1);
  CHECK(q.gathers.size() == 2 * z3.gathers.size());
  const std::int64_t shard = 98'304 + 16 + 32 + 393'216;
  CHECK(qwz_quant_groups(shard) == 66);
  CHECK(q.gathers[7].second == 4.0 * 384 * static_cast<double>(qwz_quant_groups(shard)));
  CHECK(q.gathers[6].second == static_cast<double>(shard) * 384);
  // Without prefetch every run is its own call.
  const StepGathers alone = step_gathers("zero3", "0.19", 0, 1);
  CHECK(alone.gathers.size() == 2 * 162);
  CHECK(z3.host_ops < alone.host_ops);
  // A bucket no module reaches: run 0's hook prefetches the rest of the forward with one call and
  // pops the whole backward, every module of which is then in flight: each backward run is
  // fetched by its own hook.
  const std::int64_t all = std::int64_t{1} << 50;
  const auto whole = step_gathers("zero3", "0.19", all, 1).gathers;
  REQUIRE(whole.size() == 2 + 162);
  CHECK(whole[0].second + whole[1].second ==
        zerosim::testing::Approx(2.0 * static_cast<double>(z3.elems)).epsilon(1e-12));
  CHECK(step_gathers("zero3+qwz", "0.19", all, 1).gathers.size() == 2 * (2 + 162));
  CHECK(layers == 40);
}

TEST_CASE("a prefetch call splits by hpZ copy from 0.13.2, takes the hook's flag before") {
  // ZeRO-3 + hpZ, two micro-steps, the calls of the test above (164 started by forward hooks, 92
  // by backward hooks per micro-step). 0.10.0 calls all_gather_coalesced(params, forward) once,
  // the hook's flag choosing for the whole call: the forward hooks' calls cross nodes (those
  // they start for the backward's runs included), the backward hooks' stay inside the node.
  // 0.13.2 and 0.19.5 __all_gather_params_ call all_gather_coalesced once for the parameters
  // whose secondary copy exists and once for the rest: in micro-step 0 the forward's parameters
  // have none but the tied head's word embedding (the embedding released it), the backward's
  // all have one, so the one call that mixes them splits (hook 121's, which spans the forward's
  // last parameters and the backward's): 256 + 1 calls, 123 across nodes; every gather of
  // micro-step 1 reads the copy.
  auto tiers = [](const StepGathers& g) {
    std::pair<int, int> n{0, 0};  // world, hpZ
    for (const auto& x : g.gathers) (x.first == 1 ? n.first : n.second)++;
    return n;
  };
  const std::int64_t bucket = 50'000'000;
  CHECK(tiers(step_gathers("zero3+hpz", "0.19", bucket, 2)) ==
        std::pair<int, int>{123, 256 + 1 - 123 + 256});
  CHECK(tiers(step_gathers("zero3+hpz", "0.13.2", bucket, 2)) ==
        std::pair<int, int>{123, 256 + 1 - 123 + 256});
  CHECK(tiers(step_gathers("zero3+hpz", "0.10.0", bucket, 2)) ==
        std::pair<int, int>{2 * 164, 2 * 92});
}

TEST_CASE("the most gathered weights live at once: held and in flight at the same run") {
  // LoweredStep::live_elems is the memory model's gathered weights: without prefetch, the most
  // held (max_held_elems); with it, at least that and at most the most held plus the most in
  // flight, and the coordinator stops prefetching once held and in flight reach
  // stage3_max_live_parameters (it may pass it by the module whose gather it starts last).
  auto topo = load_cluster("dgx2-v100", ClusterOverrides{24, 0, 0, "", 0});
  auto prof = select_cost_profile("", topo);
  for (const std::int64_t bucket : {std::int64_t{0}, std::int64_t{50'000'000}}) {
    for (const std::int64_t max_live : {std::int64_t{200'000'000}, std::int64_t{1'000'000'000}}) {
      CAPTURE(bucket);
      CAPTURE(max_live);
      StepSetup setup = gpt18b_setup("zero3", 1024, 512, 1);
      setup.strategy.prefetch_bucket_elems = bucket;
      setup.strategy.max_live_params = max_live;
      const auto low = lower_step(setup, topo, prof);
      const std::int64_t held = max_held_elems(low.trace, *low.modules);
      std::int64_t largest = 0;
      for (const auto& m : *low.modules) largest = std::max(largest, m.gather_elems);
      if (bucket == 0) {
        CHECK(low.prefetched_elems == 0);
        CHECK(low.live_elems == held);
        continue;
      }
      CHECK(low.prefetched_elems > 0);
      CHECK(low.live_elems >= held);
      CHECK(low.live_elems <= held + low.prefetched_elems);
      CHECK(low.live_elems <= std::max(held, max_live + largest));
    }
  }
}

TEST_CASE("the largest all_gather_coalesced call sizes qwZ's receive buffers") {
  // A bucket no module reaches: run 0's hook prefetches the rest of the forward (every gpt-18b
  // module but the embedding) with one call, the step's largest; qwZ quantizes its flat shard
  // (each tensor's ceil(n / 384) elements, 384 ranks) as one tensor.
  auto topo = load_cluster("dgx2-v100", ClusterOverrides{24, 0, 0, "", 0});
  auto prof = select_cost_profile("", topo);
  StepSetup setup = gpt18b_setup("zero3+qwz", 1024, 512, 1);
  setup.checkpointing = false;
  setup.strategy.prefetch_bucket_elems = std::int64_t{1} << 50;
  setup.strategy.max_live_params = std::int64_t{1} << 50;
  const auto low = lower_step(setup, topo, prof);
  std::int64_t elems = 0, shard = 0;
  for (std::size_t i = 1; i < low.modules->size(); ++i) {
    const Module& m = (*low.modules)[i];
    elems += m.gather_elems;
    std::int64_t own = 0;
    for (const ParamTensor& p : m.params) {
      shard += (p.elems + 383) / 384;
      own += p.elems;
    }
    shard += (m.gather_elems - own + 383) / 384;
  }
  CHECK(low.largest_call_elems == elems);
  CHECK(low.largest_call_scale_bytes == 4.0 * 384 * static_cast<double>(qwz_quant_groups(shard)));
}
