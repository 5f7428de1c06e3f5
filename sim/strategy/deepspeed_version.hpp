// A DeepSpeed release, and the stage-3 / ZeRO++ rules that differ between the releases the
// simulator models (0.10.0, the first with ZeRO++, to 0.19, the current one). Each rule names the
// DeepSpeed file and function that decide it (docs/step-model.md, "DeepSpeed releases").
#pragma once
#include <compare>
#include <cstdint>
#include <string>

namespace zerosim {

// A release as given: MAJOR.MINOR (patch_given false, patch 0: the rules are the same for every
// patch of such a minor release) or MAJOR.MINOR.PATCH. The default is the current release, 0.19.
struct DeepSpeedVersion {
  int major = 0, minor = 19, patch = 0;
  bool patch_given = false;
  // Orders releases by (major, minor, patch), whatever their size: no arithmetic that can overflow.
  std::strong_ordering operator<=>(const DeepSpeedVersion& o) const {
    if (const auto c = major <=> o.major; c != 0) return c;
    if (const auto c = minor <=> o.minor; c != 0) return c;
    return patch <=> o.patch;
  }
  bool operator==(const DeepSpeedVersion&) const = default;
};

// The accepted forms and range, for help and messages.
inline constexpr const char* kDeepSpeedVersionForms =
    "MAJOR.MINOR or MAJOR.MINOR.PATCH from 0.10.0 (the first release with ZeRO++) to 0.19 (the "
    "current release); 0.10 and 0.13 need their patch (their rules change within the minor "
    "release)";

// The rule a text breaks ("'0.9' is before 0.10.0, the first release with ZeRO++"), or "".
std::string deepspeed_version_rule(const std::string& text);
// The version of a valid text (deepspeed_version_rule(text) is "").
DeepSpeedVersion parse_deepspeed_version(const std::string& text);
// "0.19" or "0.13.2": as given.
std::string to_string(const DeepSpeedVersion& v);

// Which gathers read hpZ's intra-node secondary partition (ds_secondary_tensor), by release:
// - BackwardOnly (0.10.0-0.10.1): partition_parameters.py all_gather_coalesced(params, forward)
//   takes the secondary copy only when `not forward`; parameter_offload.py's
//   pre_sub_module_forward_function passes forward=True, the backward hook forward=False. So the
//   backward hooks' gathers only; every forward and every checkpointed recompute cross nodes.
// - GradEnabled (0.10.2-0.13.1, PR #4232): the forward hook passes torch.is_grad_enabled() as
//   `forward`. A checkpointed layer's original forward runs under torch.no_grad()
//   (checkpointing.py CheckpointFunction.forward), so from the second micro-step on (the copy
//   exists once the first forward released the weights) it reads the copy; its recompute (grad
//   enabled) crosses nodes.
// - WhenPresent (0.13.2 on, PR #4906): all_gather_coalesced(params, safe_mode, quantize) reads
//   the copy whenever params[0].ds_secondary_tensor is not None. stage3.py _post_step calls
//   invalidate_secondary_tensor() after each optimizer step, and the release after a gather
//   (_partition_param_sec) rebuilds it: only the first micro-step's forward crosses nodes.
enum class HpzRule : std::uint8_t { BackwardOnly, GradEnabled, WhenPresent };
HpzRule hpz_rule(const DeepSpeedVersion& v);
const char* to_string(HpzRule r);  // "backward-hooks-only" | "grad-enabled" | "when-present"
// One sentence: which gathers read the secondary copy under the rule.
const char* describe(HpzRule r);

// qgZ's per-tensor fallback to the FP16 reduce-scatter (coalesced_collectives.py
// all_to_all_quant_reduce): 1-D tensors always; from 0.13.2 (PR #5056) also every tensor whose size
// does not divide by 2 x world size. Before, such a tensor goes to the all-to-all (which PR #5056
// says fails on a shape mismatch).
bool qgz_divisibility_fallback(const DeepSpeedVersion& v);
const char* describe_qgz_fallback(const DeepSpeedVersion& v);

}  // namespace zerosim
