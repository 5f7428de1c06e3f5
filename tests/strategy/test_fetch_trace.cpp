// The fetch trace: DeepSpeed stage 3's run order under activation checkpointing and the
// stage3_max_reuse_distance rule, against hand-written traces and the closed-form thresholds.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/strategy/fetch_trace.hpp"
#include "sim/workload/model.hpp"

using namespace zerosim;

namespace {
// embed (10), layer 0 and layer 1 as qkv (3), attn (1), fc1 (4), fc2 (4), head (10): the
// layers' submodules are recomputed under checkpointing.
std::vector<Module> toy() {
  std::vector<Module> v;
  auto add = [&](const char* name, std::int64_t elems, int layer) {
    Module m;
    m.name = name;
    m.gather_elems = elems;
    m.recomputed = layer >= 0;
    m.layer = layer;
    v.push_back(m);
  };
  add("embed", 10, -1);
  for (int l = 0; l < 2; ++l)
    for (const auto& [n, e] : {std::pair{"qkv", 3}, {"attn", 1}, {"fc1", 4}, {"fc2", 4}})
      add(n, e, l);
  add("head", 10, -1);
  return v;
}

std::string text(const std::vector<FetchRun>& runs) {
  std::string s;
  for (const auto& r : runs)
    s += (r.pass == FetchPass::Forward     ? "F"
          : r.pass == FetchPass::Recompute ? "R"
                                           : "B") +
         std::to_string(r.module) + (r.gather ? "" : "k") + " ";
  return s;
}
}  // namespace

TEST_CASE("a checkpointed layer replays its forward before its backwards; other modules do not") {
  const auto m = toy();  // 0 embed, 1-4 layer 0, 5-8 layer 1, 9 head
  CHECK(text(fetch_trace(m, true, 0)) ==
        "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B9 R5 R6 R7 R8 B8 B7 B6 B5 R1 R2 R3 R4 B4 B3 B2 B1 B0 ");
  CHECK(text(fetch_trace(m, false, 0)) ==
        "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B9 B8 B7 B6 B5 B4 B3 B2 B1 B0 ");
}

TEST_CASE("weights stay gathered when fewer parameters than the reuse distance run in between") {
  const auto m = toy();
  // Between a recompute and the backward of the same submodule: fc2 nothing, fc1 2 x 4 = 8,
  // attn 2 x (4 + 4) = 16, qkv 2 x (1 + 4 + 4) = 18. The head's backward follows its forward.
  CHECK(text(fetch_trace(m, true, 1)) ==
        "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B9k R5 R6 R7 R8 B8k B7 B6 B5 R1 R2 R3 R4 B4k B3 B2 B1 B0 ");
  // A sum equal to the distance releases (DeepSpeed stops walking once it reaches it).
  CHECK(text(fetch_trace(m, true, 8)) ==
        "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B9k R5 R6 R7 R8 B8k B7 B6 B5 R1 R2 R3 R4 B4k B3 B2 B1 B0 ");
  CHECK(
      text(fetch_trace(m, true, 9)) ==
      "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B9k R5 R6 R7 R8 B8k B7k B6 B5 R1 R2 R3 R4 B4k B3k B2 B1 B0 ");
  CHECK(text(fetch_trace(m, true, 19)) ==
        "F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 B9k R5 R6 R7 R8 B8k B7k B6k B5k R1 R2 R3 R4 B4k B3k B2k "
        "B1k B0 ");
  // Layer 1's forward fc2 is followed by the head twice (20) and layer 1's recompute of qkv,
  // attn and fc1 (8) before its own recompute: kept from a distance of 29.
  const auto far = fetch_trace(m, true, 29);
  CHECK(text(far).find("R8k") != std::string::npos);
  CHECK(text(fetch_trace(m, true, 28)).find("R8k") == std::string::npos);
}

TEST_CASE("the most weights held at once: the running module's plus those kept") {
  const auto m = toy();
  // Distance 19, run by run: a recomputed layer's submodules pile up until its first backward.
  const std::vector<std::int64_t> layer = {3, 4, 8, 12, 12, 8, 4, 3};  // R qkv..fc2, B fc2..qkv
  std::vector<std::int64_t> want = {10, 3, 1, 4, 4, 3, 1, 4, 4, 10, 10};
  want.insert(want.end(), layer.begin(), layer.end());
  want.insert(want.end(), layer.begin(), layer.end());
  want.push_back(10);
  CHECK(held_elems(fetch_trace(m, true, 19), m) == want);
  CHECK(max_held_elems(fetch_trace(m, true, 0), m) == 10);  // the largest module alone
  // Distance 19: a whole layer (12) is held at its first backward, and the head (10) is the
  // largest single module.
  CHECK(max_held_elems(fetch_trace(m, true, 19), m) == 12);
  // Distance 1000: every module is kept until its next run; at the head's forward the embedding
  // (for its backward) and both layers (for their recomputes) are held with the head.
  CHECK(max_held_elems(fetch_trace(m, true, 1000), m) == 10 + 2 * 12 + 10);
}

TEST_CASE("gpt-18b at DeepSpeed's default distance: one gather per submodule in backward") {
  // 18 h^2 < 1e9 for h = 6144: every submodule of a middle layer is gathered for its recompute
  // and kept for its backward; gpt-49b (h = 8192) re-gathers qkv (18 h^2) and attn (16 h^2).
  for (const auto& kv : {std::pair{"gpt-18b", 0}, {"gpt-49b", 2}}) {
    // Not a structured binding: CAPTURE/INFO cannot capture one under clang 14 (README).
    const auto& name = kv.first;
    const auto& regathered = kv.second;
    CAPTURE(name);
    const auto mods = build_modules(load_model(name), 1024, 512);
    const auto runs = fetch_trace(mods, true, 1'000'000'000);
    const int layer = mods[static_cast<std::size_t>(mods.size() / 2)].layer;
    int again = 0;
    for (const auto& r : runs)
      if (r.pass == FetchPass::Backward && r.gather &&
          mods[static_cast<std::size_t>(r.module)].layer == layer)
        ++again;
    CHECK(again == regathered);
  }
}

namespace {
// The forward runs of a model (every run gathers) and the weights held at each.
struct Forward {
  std::vector<Module> mods;
  std::vector<FetchRun> runs;
  std::vector<std::int64_t> held;
};
Forward forward_of(const char* model) {
  Forward f;
  f.mods = build_modules(load_model(model), 1024, 512);
  f.runs = fetch_trace(f.mods, true, 1'000'000'000);
  f.runs.resize(f.mods.size());
  f.held = held_elems(f.runs, f.mods);
  return f;
}
}  // namespace

TEST_CASE("prefetch: each hook starts up to the bucket's new elements, popped runs stay popped") {
  // toy(): embed 10, qkv 3, attn 1, fc1 4, fc2 4 (twice), head 10; forward only.
  const auto m = toy();
  auto runs = fetch_trace(m, false, 0);
  runs.resize(m.size());
  const auto held = held_elems(runs, m);
  // Bucket 4: embed's hook starts qkv0 (3 < 4) and attn0 (4); qkv0's fc1_0; attn0's fc2_0;
  // fc1_0's qkv1 (3) and attn1; fc2_0's fc1_1; qkv1's fc2_1; attn1's head.
  const auto p = prefetch_plan(runs.data(), held.data(), runs.size(), m, 4, 1000);
  CHECK(p.by == std::vector<std::ptrdiff_t>{-1, 0, 0, 1, 2, 3, 3, 4, 5, 6});
  // In flight after each hook: qkv0 + attn0, then attn0 + fc1_0, ...
  CHECK(p.in_flight == std::vector<std::int64_t>{4, 5, 8, 8, 8, 9, 18, 14, 10, 0});
  // A live limit of 10: the embedding holds all of it (no room at its hook: qkv0 is fetched by its
  // own); qkv0's hook (3 held) starts attn0 and fc1_0; fc1_0's (4 held, fc2_0's 4 in flight) has
  // room for 2 and starts qkv1 (3); fc2_0's (4 held, 3 in flight) room 3: attn1 and fc1_1.
  const auto tight = prefetch_plan(runs.data(), held.data(), runs.size(), m, 4, 10);
  CHECK(tight.by == std::vector<std::ptrdiff_t>{-1, -1, 1, 1, 2, 3, 4, 4, 5, 6});
  // No bucket: no prefetch.
  const auto none = prefetch_plan(runs.data(), held.data(), runs.size(), m, 0, 1000);
  CHECK(none.by == std::vector<std::ptrdiff_t>(runs.size(), -1));
}

TEST_CASE("prefetch on Llama-2-7B's small modules runs ahead up to stage3_max_live_parameters") {
  // DeepSpeed's defaults: 5e7 new elements per hook, 1e9 live. Llama-2-7B's layer modules (qkv
  // 5.0e7, attn 1.7e7, gate_up 9.0e7, down 4.5e7) are consumed more slowly than the hooks start
  // them until held + in flight reaches the live bound; a hook exceeds it by at most the last
  // module it starts.
  const Forward f = forward_of("llama-2-7b");
  constexpr std::int64_t L = 1'000'000'000;
  const auto p = prefetch_plan(f.runs.data(), f.held.data(), f.runs.size(), f.mods, 50'000'000, L);
  std::int64_t most = 0, largest = 0;
  std::ptrdiff_t ahead = 0;
  for (std::size_t k = 0; k < f.runs.size(); ++k) {
    most = std::max(most, f.held[k] + p.in_flight[k]);
    for (std::size_t u = p.first[k]; u < p.first[k + 1]; ++u) {
      largest = std::max(largest, p.elems[u]);
      if (p.by[u] >= 0) ahead = std::max(ahead, static_cast<std::ptrdiff_t>(k) - p.by[u]);
    }
  }
  // A hook exceeds the bound by at most the last tensor it starts.
  CHECK(most >= L);
  CHECK(most < L + largest);
  CHECK(ahead >= 10);  // far beyond a window of ceil(5e7 / mean module) = 1 module
}

TEST_CASE("prefetch pops parameters: a hook can stop inside a module's parameter list") {
  // Modules of several tensors, forward only, every run gathering: A [2, 3], B [4, 1], C [6],
  // D [1, 1, 1], E [5, 2]; the queue A0 A1 B0 B1 C0 D0 D1 D2 E0 E1 (tensor indices 0-9).
  std::vector<Module> m;
  for (const auto& sizes :
       std::vector<std::vector<std::int64_t>>{{2, 3}, {4, 1}, {6}, {1, 1, 1}, {5, 2}}) {
    Module x;
    for (const std::int64_t n : sizes) x.params.push_back({"w", n, false, n});
    x.gather_elems = x.param_elems();
    m.push_back(x);
  }
  auto runs = fetch_trace(m, false, 0);
  runs.resize(m.size());
  const auto held = held_elems(runs, m);
  // Bucket 4: hook A starts B0 (4, the bucket) and stops inside B: B1 is gathered by B's own hook,
  // which pops it first and then starts C0 (6); hook C starts D0-D2 and E0 (8) and stops inside
  // E; hook D pops E1 and starts it.
  const auto p4 = prefetch_plan(runs.data(), held.data(), runs.size(), m, 4, 1000);
  CHECK(p4.first == std::vector<std::size_t>{0, 2, 4, 5, 8, 10});
  CHECK(p4.elems == std::vector<std::int64_t>{2, 3, 4, 1, 6, 1, 1, 1, 5, 2});
  CHECK(p4.by == std::vector<std::ptrdiff_t>{-1, -1, 0, -1, 1, 2, 2, 2, 2, 3});
  CHECK(p4.in_flight == std::vector<std::int64_t>{4, 6, 8, 7, 0});
  // Bucket 7: hook A starts B0 B1 C0 (11); hook B (B's 5 now held: 6 in flight) D0-D2 and E0
  // (8) and stops inside E; hook C (C's 6 held) pops E1, the rest of E, and starts it: E's
  // tensors come with two prefetch calls, of hooks B and C.
  const auto p7 = prefetch_plan(runs.data(), held.data(), runs.size(), m, 7, 1000);
  CHECK(p7.by == std::vector<std::ptrdiff_t>{-1, -1, 0, 0, 0, 1, 1, 1, 1, 2});
  CHECK(p7.in_flight == std::vector<std::int64_t>{11, 14, 10, 7, 0});
}

TEST_CASE("prefetch on the paper's GPTs: each hook starts the next module up to the bucket") {
  // Every gpt-18b module is at least 3.8e7 elements (attn, h^2 + h). With a bucket no larger than
  // the smallest module each hook starts the next run's tensors in order (norm, weight, bias)
  // until it has started the bucket: the whole module when the tensors before its last are below
  // the bucket, else up to the first that reaches it, the rest (a projection's bias) gathered by
  // the run's own hook. A bucket of 1e9 (above every module) on a model whose modules are one
  // tensor each would start the whole rest of the pass at once (the toy above).
  for (const char* model : {"gpt-18b", "gpt-49b"}) {
    CAPTURE(model);
    const Forward f = forward_of(model);
    std::int64_t smallest = f.mods[0].gather_elems;
    for (const auto& mod : f.mods) smallest = std::min(smallest, mod.gather_elems);
    const auto p =
        prefetch_plan(f.runs.data(), f.held.data(), f.runs.size(), f.mods, smallest, 1'000'000'000);
    int split = 0;
    for (std::size_t k = 1; k < f.runs.size(); ++k) {
      std::int64_t started = 0;
      for (std::size_t u = p.first[k]; u < p.first[k + 1]; ++u) {
        CHECK(p.by[u] == (started < smallest ? static_cast<std::ptrdiff_t>(k) - 1 : -1));
        split += started >= smallest;
        started += p.elems[u];
      }
    }
    // A layer's QKV, fc1 and fc2 leave their bias to their own hook (the tensors before it are
    // above the bucket, h^2 + h), and the tied head its final norm's weight and bias (the word
    // embedding, V h, before them); the attention output is whole.
    CHECK(split == 3 * load_model(model).layers + 2);
  }
}
