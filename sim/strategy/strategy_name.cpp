#include "sim/strategy/strategy_name.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace zerosim {

namespace {

// The kinds named by one word, with their display names.
struct NamedKind {
  const char* name;
  StrategyKind kind;
  const char* display;
};
constexpr NamedKind kNamedKinds[] = {
    {"zero1", StrategyKind::Zero1, "ZeRO-1"},
    {"zero2", StrategyKind::Zero2, "ZeRO-2"},
    {"hsdp", StrategyKind::Hsdp, "HSDP"},
    {"fsdp", StrategyKind::FsdpFullShard, "FSDP FULL_SHARD"},
    {"fsdp-grad-op", StrategyKind::FsdpShardGradOp, "FSDP SHARD_GRAD_OP"},
    {"fsdp-hybrid", StrategyKind::FsdpHybridShard, "FSDP HYBRID_SHARD"},
    {"fsdp2", StrategyKind::Fsdp2, "FSDP2 fully_shard"},
};

const NamedKind* named_kind(StrategyKind k) {
  for (const auto& n : kNamedKinds)
    if (n.kind == k) return &n;
  return nullptr;  // Zero3: named by its techniques
}

// Why `text` is no strategy name ("" when it is one); the id through `out`.
std::string parse(std::string_view text, StrategyId& out) {
  out = StrategyId{};
  if (text == "zeropp" || text == "zero++") {
    out.qwz = out.hpz = out.qgz = true;
    return "";
  }
  for (const auto& n : kNamedKinds)
    if (text == n.name) {
      out.kind = n.kind;
      return "";
    }
  std::size_t start = 0;
  bool first = true;
  while (true) {
    const auto plus = text.find('+', start);
    const std::string_view part =
        text.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
    if (first) {
      for (const auto& n : kNamedKinds)
        if (part == n.name)
          return fmt::format(
              "strategy '{}': {} takes no components{}", text, part,
              StrategyId{n.kind}.family() == StrategyFamily::Fsdp
                  ? "; PyTorch FSDP has no quantized collectives (qwz, hpz and qgz are DeepSpeed "
                    "ZeRO++'s: zero3+qwz, zeropp, ...)"
                  : "");
      if (part != "zero3")
        return fmt::format(
            "strategy '{}' must start with zero3 (or be zeropp, zero1, zero2, hsdp, fsdp, "
            "fsdp-grad-op, fsdp-hybrid or fsdp2); e.g. zero3, zeropp, zero3+qwz+hpz, fsdp",
            text);
      first = false;
    } else {
      bool* bit = part == "qwz"   ? &out.qwz
                  : part == "hpz" ? &out.hpz
                  : part == "qgz" ? &out.qgz
                                  : nullptr;
      if (!bit)
        return fmt::format("unknown strategy component '{}' in '{}' (known: qwz, hpz, qgz)", part,
                           text);
      if (*bit) return fmt::format("strategy component '{}' given twice in '{}'", part, text);
      *bit = true;
    }
    if (plus == std::string_view::npos) return "";
    start = plus + 1;
  }
}

}  // namespace

const char* to_string(StrategyFamily f) { return f == StrategyFamily::Fsdp ? "fsdp" : "deepspeed"; }

StrategyFamily StrategyId::family() const {
  switch (kind) {
    case StrategyKind::FsdpFullShard:
    case StrategyKind::FsdpShardGradOp:
    case StrategyKind::FsdpHybridShard:
    case StrategyKind::Fsdp2:
      return StrategyFamily::Fsdp;
    default:
      return StrategyFamily::DeepSpeed;
  }
}

std::string StrategyId::name() const {
  if (const NamedKind* n = named_kind(kind)) return n->name;
  if (qwz && hpz && qgz) return "zeropp";
  std::string s = "zero3";
  if (qwz) s += "+qwz";
  if (hpz) s += "+hpz";
  if (qgz) s += "+qgz";
  return s;
}

std::string StrategyId::display() const {
  if (const NamedKind* n = named_kind(kind)) return n->display;
  if (qwz && hpz && qgz) return "ZeRO++";
  std::string s = "ZeRO-3";
  if (qwz) s += " + qwZ";
  if (hpz) s += " + hpZ";
  if (qgz) s += " + qgZ";
  return s;
}

int StrategyId::rank() const {
  switch (kind) {
    case StrategyKind::Zero1:
      return -2;
    case StrategyKind::Zero2:
      return -1;
    case StrategyKind::Hsdp:
      return 8;
    case StrategyKind::FsdpFullShard:
      return 9;
    case StrategyKind::FsdpShardGradOp:
      return 10;
    case StrategyKind::FsdpHybridShard:
      return 11;
    case StrategyKind::Fsdp2:
      return 12;
    case StrategyKind::Zero3:
      break;
  }
  // zero3 0; singles 1..3 (qwZ, hpZ, qgZ); pairs 4..6; ZeRO++ 7.
  const int count = techniques();
  if (count == 0) return 0;
  if (count == 3) return 7;
  if (count == 1) return qwz ? 1 : hpz ? 2 : 3;
  return !qgz ? 4 : !hpz ? 5 : 6;
}

StrategyId parse_strategy_id(std::string_view text, const std::string& flag) {
  StrategyId id;
  if (const std::string why = parse(text, id); !why.empty()) throw flag_error(flag, why);
  return id;
}

std::optional<StrategyId> find_strategy_id(std::string_view text) {
  StrategyId id;
  if (!parse(text, id).empty()) return std::nullopt;
  return id;
}

}  // namespace zerosim
