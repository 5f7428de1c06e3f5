#include "sim/strategy/deepspeed_version.hpp"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace zerosim {

namespace {

// The numbers of "A.B" or "A.B.C" (decimal, no sign, no leading '+'), or an empty list.
std::vector<int> numbers(const std::string& text) {
  std::vector<int> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (true) {
    int v = 0;
    const auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || next == p || v < 0) return {};
    out.push_back(v);
    if (next == end) break;
    if (*next != '.' || next + 1 == end) return {};
    p = next + 1;
  }
  if (out.size() < 2 || out.size() > 3) return {};
  return out;
}

}  // namespace

std::string deepspeed_version_rule(const std::string& text) {
  const std::vector<int> n = numbers(text);
  if (n.empty()) return fmt::format("'{}' is not MAJOR.MINOR or MAJOR.MINOR.PATCH", text);
  const DeepSpeedVersion v = parse_deepspeed_version(text);
  if (v < DeepSpeedVersion{0, 10, 0, true})
    return fmt::format("'{}' is before 0.10.0, the first release with ZeRO++", text);
  if (v.major != 0 || v.minor > 19)
    return fmt::format("'{}' is after 0.19, the latest release whose rules are modelled", text);
  if (!v.patch_given && (v.minor == 10 || v.minor == 13))
    return fmt::format(
        "'{}' needs its patch: hpZ's rule changes within it (0.10.2 and 0.13.2), e.g. {}.{}.0",
        text, v.major, v.minor);
  return "";
}

DeepSpeedVersion parse_deepspeed_version(const std::string& text) {
  const std::vector<int> n = numbers(text);
  DeepSpeedVersion v;
  if (n.empty()) return v;
  v.major = n[0];
  v.minor = n[1];
  v.patch = n.size() == 3 ? n[2] : 0;
  v.patch_given = n.size() == 3;
  return v;
}

std::string to_string(const DeepSpeedVersion& v) {
  return v.patch_given ? fmt::format("{}.{}.{}", v.major, v.minor, v.patch)
                       : fmt::format("{}.{}", v.major, v.minor);
}

HpzRule hpz_rule(const DeepSpeedVersion& v) {
  if (v >= DeepSpeedVersion{0, 13, 2, true}) return HpzRule::WhenPresent;
  if (v >= DeepSpeedVersion{0, 10, 2, true}) return HpzRule::GradEnabled;
  return HpzRule::BackwardOnly;
}

const char* to_string(HpzRule r) {
  switch (r) {
    case HpzRule::BackwardOnly:
      return "backward-hooks-only";
    case HpzRule::GradEnabled:
      return "grad-enabled";
    case HpzRule::WhenPresent:
      return "when-present";
  }
  return "";
}

const char* describe(HpzRule r) {
  switch (r) {
    case HpzRule::BackwardOnly:
      return "hpZ's intra-node copy serves the backward hooks' gathers only; every forward and "
             "every checkpointed recompute gathers across nodes";
    case HpzRule::GradEnabled:
      return "hpZ's intra-node copy serves the backward hooks and, from the second micro-step, "
             "checkpointed layers' forwards (run under no_grad); recomputes and the first "
             "micro-step's forward gather across nodes";
    case HpzRule::WhenPresent:
      return "hpZ's intra-node copy serves every gather once it exists: only the first "
             "micro-step's forward after an optimizer step gathers across nodes";
  }
  return "";
}

bool qgz_divisibility_fallback(const DeepSpeedVersion& v) {
  return v >= DeepSpeedVersion{0, 13, 2, true};
}

const char* describe_qgz_fallback(const DeepSpeedVersion& v) {
  return qgz_divisibility_fallback(v)
             ? "qgZ reduce-scatters 1-D tensors and tensors whose size does not divide by 2 x "
               "world size in FP16"
             : "qgZ reduce-scatters 1-D tensors in FP16; every other tensor goes through the "
               "all-to-all";
}

}  // namespace zerosim
