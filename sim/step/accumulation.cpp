#include "sim/step/accumulation.hpp"

namespace zerosim {

double extend_accumulation(double one, double two, int grad_accum) {
  return one + (grad_accum - 1) * (two - one);
}

std::uint64_t extend_accumulation(std::uint64_t one, std::uint64_t two, int grad_accum) {
  // The second micro-step only adds: two >= one.
  return one + static_cast<std::uint64_t>(grad_accum - 1) * (two - one);
}

namespace {

CommTotals extend_totals(const CommTotals& one, const CommTotals& two, int g) {
  CommTotals t;
  t.inter_node_bytes = extend_accumulation(one.inter_node_bytes, two.inter_node_bytes, g);
  t.intra_node_bytes = extend_accumulation(one.intra_node_bytes, two.intra_node_bytes, g);
  t.count = extend_accumulation(one.count, two.count, g);
  t.busy_s = extend_accumulation(one.busy_s, two.busy_s, g);
  return t;
}

}  // namespace

StepTimeBreakdown extend_accumulation(const StepTimeBreakdown& one, const StepTimeBreakdown& two,
                                      int g) {
  const auto x = [g](double a, double b) { return extend_accumulation(a, b, g); };
  StepTimeBreakdown b;
  b.compute_s = x(one.compute_s, two.compute_s);
  b.recompute_s = x(one.recompute_s, two.recompute_s);
  b.optimizer_s = x(one.optimizer_s, two.optimizer_s);
  b.param_fetch_s = x(one.param_fetch_s, two.param_fetch_s);
  b.quant_kernels_s = x(one.quant_kernels_s, two.quant_kernels_s);
  b.other_kernels_s = x(one.other_kernels_s, two.other_kernels_s);
  const ExposedComm &e1 = one.exposed_comm, &e2 = two.exposed_comm;
  b.exposed_comm.all_gather_s = x(e1.all_gather_s, e2.all_gather_s);
  b.exposed_comm.reduce_scatter_s = x(e1.reduce_scatter_s, e2.reduce_scatter_s);
  b.exposed_comm.all_to_all_s = x(e1.all_to_all_s, e2.all_to_all_s);
  b.exposed_comm.all_reduce_s = x(e1.all_reduce_s, e2.all_reduce_s);
  b.exposed_comm.total_s = x(e1.total_s, e2.total_s);
  b.exposed_kernels_s = x(one.exposed_kernels_s, two.exposed_kernels_s);
  b.idle_s = x(one.idle_s, two.idle_s);
  b.offload_copy_s = x(one.offload_copy_s, two.offload_copy_s);
  b.nvme_io_s = x(one.nvme_io_s, two.nvme_io_s);
  b.host_optimizer_s = x(one.host_optimizer_s, two.host_optimizer_s);
  b.exposed_offload_s = x(one.exposed_offload_s, two.exposed_offload_s);
  const ComputeTerms &k1 = one.compute_kernels, &k2 = two.compute_kernels;
  b.compute_kernels.gemm_s = x(k1.gemm_s, k2.gemm_s);
  b.compute_kernels.attention_s = x(k1.attention_s, k2.attention_s);
  b.compute_kernels.launch_s = x(k1.launch_s, k2.launch_s);
  for (std::size_t i = 0; i < k1.memory_s.size(); ++i)
    b.compute_kernels.memory_s[i] = x(k1.memory_s[i], k2.memory_s[i]);
  return b;
}

CommResult extend_accumulation(const CommResult& one, const CommResult& two, int g) {
  CommResult c;
  c.inter_node_bytes = extend_accumulation(one.inter_node_bytes, two.inter_node_bytes, g);
  c.intra_node_bytes = extend_accumulation(one.intra_node_bytes, two.intra_node_bytes, g);
  c.collectives = extend_accumulation(one.collectives, two.collectives, g);
  c.flows = extend_accumulation(one.flows, two.flows, g);
  const auto extend_map = [g](const std::map<std::string, CommTotals>& a,
                              const std::map<std::string, CommTotals>& b) {
    std::map<std::string, CommTotals> out;
    for (const auto& [key, t2] : b) {
      const auto it = a.find(key);
      out.emplace(key, extend_totals(it != a.end() ? it->second : CommTotals{}, t2, g));
    }
    return out;
  };
  c.by_collective = extend_map(one.by_collective, two.by_collective);
  c.by_phase = extend_map(one.by_phase, two.by_phase);
  return c;
}

}  // namespace zerosim
