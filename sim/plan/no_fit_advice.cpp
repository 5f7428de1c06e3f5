#include "sim/plan/no_fit_advice.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/core/units.hpp"

namespace zerosim::plan {

double sharded_bytes(const StepResult& r) {
  const MemoryEstimate& m = r.memory;
  const Strategy& s = r.scenario.strategy;
  // HSDP shards within a fixed group: more nodes add replicas, not shards.
  if (s.hsdp) return 0;
  // Stage 1 shards the optimizer states, stage 2 the gradients too, stage 3 the weights too.
  return m.component("optimizer_fp32") + (s.stage >= 2 ? m.component("grads_fp16") : 0) +
         (s.stage >= 3 ? m.component("params_fp16") : 0);
}

bool zero3_shards_more(const Strategy& s) { return s.stage < 3 || s.hsdp; }

long long nodes_to_fit(const StepResult& r) {
  const MemoryEstimate& m = r.memory;
  const double sharded = sharded_bytes(r);
  const double room = m.capacity_bytes - (m.peak_bytes - sharded);
  const int per_node = r.scenario.gpus_per_node;
  if (!(room > 0) || per_node <= 0) return 0;
  // The shard shrinks as 1 / world: world' >= world x sharded / room.
  const double world = std::ceil(static_cast<double>(r.scenario.world_size) * sharded / room);
  return static_cast<long long>(std::ceil(world / per_node));
}

std::string no_fit_advice(const StepResult& closest, const std::string& description) {
  const MemoryEstimate& m = closest.memory;
  const ScenarioEcho& s = closest.scenario;
  const double sharded = sharded_bytes(closest);
  return fmt::format(
             "Closest: {}, micro-batch {}, needs {} per GPU; the GPU has {}. Model states sharded "
             "over the {} GPUs take {} of it; the rest ({}) does not shrink with more GPUs.\n",
             description, s.micro_batch_sequences, format_bytes(m.peak_bytes),
             format_bytes(m.capacity_bytes), s.world_size, format_bytes(sharded),
             format_bytes(m.peak_bytes - sharded)) +
         ways_to_fit(closest);
}

std::string ways_to_fit(const StepResult& r) {
  const MemoryEstimate& m = r.memory;
  const ScenarioEcho& s = r.scenario;
  const double sharded = sharded_bytes(r);
  std::string o;
  const long long nodes = nodes_to_fit(r);
  o += nodes > 0 ? fmt::format("Way forward: --nodes {} (or more) fits it.\n", nodes)
                 : std::string("Way forward: more nodes cannot make it fit.\n");
  if (zero3_shards_more(s.strategy))
    o += fmt::format(
        "Or shard more: ZeRO-3 (--strategy zero3) divides the FP16 weights ({} per GPU here) and "
        "gradients ({}) over every GPU.\n",
        format_bytes(m.component("params_fp16")), format_bytes(m.component("grads_fp16")));
  // ZeRO-Offload moves the FP32 optimizer states off the GPU, and (stage 3) ZeRO-Infinity's
  // parameter offload the FP16 weight shard too, at the price of CPU Adam and PCIe copies each
  // step.
  const double without_optimizer = m.peak_bytes - m.component("optimizer_fp32");
  const double without_params = without_optimizer - m.component("params_fp16");
  if (without_optimizer <= m.capacity_bytes)
    o += fmt::format(
        "Or offload the optimizer states to the CPU (ZeRO-Offload: \"offload_optimizer\": "
        "{{\"device\": \"cpu\"}} in a --deepspeed config): {} per GPU, with CPU Adam on the "
        "host every step.\n",
        format_bytes(without_optimizer));
  else if (s.strategy.stage == 3 && without_params <= m.capacity_bytes)
    o += fmt::format(
        "Or offload the optimizer states and the parameters to the CPU (\"offload_optimizer\" "
        "and \"offload_param\" {{\"device\": \"cpu\"}} in a --deepspeed config): {} per GPU, "
        "with CPU Adam on the host and the weights copied in before every gather.\n",
        format_bytes(without_params));
  // Activations are the part of the rest the user controls directly.
  const double activations = m.component("activations");
  if (activations > 0.25 * (m.peak_bytes - sharded))
    o += s.activation_checkpointing
             ? fmt::format("Activations take {}: a shorter --seq-len (now {}) needs less.\n",
                           format_bytes(activations), s.seq_len)
             : fmt::format("Activations take {}: activation checkpointing needs less.\n",
                           format_bytes(activations));
  return o;
}

}  // namespace zerosim::plan
