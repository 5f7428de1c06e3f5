// Generates the Python definitions of simulate() and sweep() from the scenario schema; plan(),
// collective() and report() are written out here.
#include "python/py_signatures.hpp"

#include <fmt/format.h>

#include <variant>

#include "python/py_keywords.hpp"
#include "sim/step/scenario_schema.hpp"

namespace zerosim::python {

namespace {

std::string annotation(const ScenarioParam& p, bool lists) {
  static const char* const kTypes[] = {"int", "float", "str", "bool"};
  const ParamKind kind = scenario_param_kind(p);
  std::string t = kTypes[static_cast<int>(kind)];
  if (kind == ParamKind::Text &&
      (p.help.find("file") != std::string::npos || p.help.find("JSON") != std::string::npos))
    t += " | os.PathLike";
  if (!p.choices.empty() && kind == ParamKind::Text) {
    t = "Literal[";
    for (std::size_t i = 0; i < p.choices.size(); ++i) t += (i ? ", '" : "'") + p.choices[i] + "'";
    t += "]";
  }
  return lists ? fmt::format("{} | Sequence[{}]", t, t) : t;
}

// The parameters (after `*,`) and their docstring lines, in the schema's order.
void scenario_params_source(bool lists, std::string& params, std::string& doc) {
  for (const ScenarioParam& p : scenario_params()) {
    const std::string kw = keyword_of(p.flag);
    params +=
        fmt::format(", {}: \"{}\"{}", kw, annotation(p, lists) + (p.required ? "" : " | None"),
                    p.required ? "" : " = None");
    doc += fmt::format("      {}: {}\n", kw, keywords_in(scenario_param_help(p, p.required)));
  }
}

// plan(), collective() and report(): their own keywords, checked by the C++ side.
constexpr const char* kCommands = R"PY(
def plan(*, cluster: 'str | os.PathLike', model: 'str | os.PathLike', nodes: 'int | None' = None,
         nics_per_node: 'int | None' = None, nic_gbps: 'float | None' = None,
         fabric: "Literal['rail', 'fat-tree'] | None" = None,
         oversubscription: 'float | None' = None, profile: 'str | os.PathLike | None' = None,
         seq_len: 'int | None' = None, attention: "Literal['auto', 'flash', 'eager'] | None" = None,
         sm_share: 'bool | None' = None, global_batch: 'int | None' = None, micro_batches: 'Sequence[int]' = (1, 2, 4, 8, 16, 32),
         qwz_bits: 'Sequence[int]' = (8,), qgz_bits: 'Sequence[int]' = (4,),
         activation_checkpointing: 'Sequence[bool]' = (True, False), confirm: int = 8,
         threads: int = 0) -> 'Plan':
    """Searches strategies (ZeRO-3 and every ZeRO++ subset), micro-batch sizes, gradient
    accumulation and activation checkpointing for a cluster and a model, as `zerosim plan` does,
    and ranks what fits in GPU memory by throughput (ties: the simpler configuration).

      cluster, nodes, nics_per_node, nic_gbps, fabric, oversubscription, model, profile,
      seq_len, attention, sm_share: as simulate()'s
      global_batch: sequences per optimizer step over all GPUs (None: free, no accumulation)
      micro_batches: micro-batch sizes (sequences per GPU) to search
      qwz_bits, qgz_bits: qwZ weight / qgZ gradient bits to search (4 or 8)
      activation_checkpointing: the settings to search
      confirm: candidates re-simulated on the flow tier (0..10000)
      threads: worker threads (0: all cores)

    Returns a Plan: plan.ranked (best first), plan.winner, plan.deepspeed_config(),
    plan.to_dict() (`zerosim plan --json`'s document), str(plan) (the CLI's table). Bad input
    raises ValueError, and so does a search where no node count can fit any configuration (before
    any is simulated); otherwise no configuration that fits is an empty plan.ranked with
    plan.closest set."""
    return _plan(locals())


def collective(*, cluster: 'str | os.PathLike', op: str, bytes: 'int | str | None' = None,
               min_bytes: 'int | str | None' = None, max_bytes: 'int | str | None' = None,
               step_factor: 'float | None' = None, nodes: 'int | None' = None,
               nics_per_node: 'int | None' = None, nic_gbps: 'float | None' = None,
               fabric: "Literal['rail', 'fat-tree'] | None" = None,
               oversubscription: 'float | None' = None, algo: 'str | None' = None,
               proto: 'str | None' = None, ranks: 'int | None' = None,
               gpus_per_node: 'int | None' = None, gpus_per_thread: 'int | None' = None,
               tier: "Literal['flow', 'analytic'] | None" = None,
               profile: 'str | os.PathLike | None' = None) -> dict:
    """Simulates one collective over a cluster's GPUs at one size (bytes) or a range of sizes
    (min_bytes..max_bytes, times step_factor), as `zerosim collective --json` does, and returns
    its document as a dict: its 'rows' hold size_bytes, count, time_us, algbw_GBps, busbw_GBps,
    algorithm and protocol (nccl-tests' columns); 'avg_busbw_GBps' their mean bus bandwidth.

      op: all_gather, reduce_scatter, all_reduce, all_to_all or send_recv (nccl-tests'
          allgather, reducescatter, allreduce, alltoall, sendrecv too, where accepted)
      bytes, min_bytes, max_bytes: an int, or nccl-tests' text ('1GiB', '64M')
      algo: NCCL's ring|tree|nvls|nvlstree|pat or zerosim's hierarchical|direct|two_hop|
            intra_node (default: NCCL's choice); proto: LL|LL128|Simple (default: NCCL's)
      ranks: the first R GPUs (default: all); gpus_per_node: the first G GPUs of every node
      gpus_per_thread: nccl-tests' -g; tier: flow (default) or analytic
      other keywords: as simulate()'s

    Bad input raises ValueError."""
    return _collective(locals())


def report(results: 'str | os.PathLike | StepResult | SweepResult | Plan | Sequence[StepResult]',
           *, format: "Literal['md', 'html', 'csv']" = 'md',
           train_tokens: 'int | str | None' = None,
           gpu_hour_price: 'float | str | None' = None) -> str:
    """Renders results as `zerosim report` does and returns the text: a results file (a sweep,
    plan or simulate JSON), a StepResult, a list of them, a SweepResult or a Plan.

      format: md (Markdown), html (one page with its charts) or csv
      train_tokens: add the time to train this many tokens (an int, or text such as '300B')
      gpu_hour_price: price of one GPU-hour, to cost that time: a number for every GPU, or
        per GPU type as text, e.g. 'h100=4,a100=2'

    Bad input raises ValueError."""
    return _report(results, locals())
)PY";

}  // namespace

std::string wrapper_source() {
  std::string out = "import os\nfrom typing import Literal, Sequence\n\n";
  std::string params, doc;
  scenario_params_source(false, params, doc);
  out += fmt::format(
      "def simulate(*{}) -> 'StepResult':\n"
      "    \"\"\"Simulates one training step, as `zerosim simulate` does, and returns its "
      "StepResult.\n\n"
      "    Each keyword is a flag of `zerosim simulate` ('_' for '-'), checked by the same "
      "rules;\n    None (the default) is the flag's default. Bad input raises ValueError, and "
      "so does a\n    configuration that no node count can fit (before anything is built); one "
      "that more\n    nodes would fit returns its result with memory.fits False.\n\n{}"
      "    \"\"\"\n    return _simulate(locals())\n\n\n",
      params, doc);
  params.clear();
  doc.clear();
  scenario_params_source(true, params, doc);
  out += fmt::format(
      "def sweep(*{}, threads: int = 0) -> 'SweepResult':\n"
      "    \"\"\"Simulates the cartesian product of the keywords' lists (a single value is a "
      "list of one),\n    as `zerosim sweep` does, on `threads` threads (0: all cores), and "
      "returns a SweepResult:\n    its results in the sweep's order (the last keyword in the "
      "order below varies fastest),\n    and separately the combinations that are bad input "
      "(result.invalid), which do not stop\n    the others. A value that is bad input by "
      "itself raises ValueError.\n\n{}"
      "      threads: worker threads (0: all cores)\n"
      "    \"\"\"\n    return _sweep(locals())\n\n",
      params, doc);
  return out + kCommands;
}

}  // namespace zerosim::python
