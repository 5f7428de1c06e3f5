#include "sim/step/program_builder.hpp"

#include "sim/step/compute_model.hpp"

namespace zerosim::lowering {

void ModuleTimes::reset(const std::vector<Module>& modules, const CostProfile& prof,
                        AttentionImpl attention) {
  modules_ = &modules;
  prof_ = &prof;
  attention_ = attention;
  shapes_.clear();
  times_.assign(modules.size(), {-1.0, -1.0});
}

std::pair<double, double> ModuleTimes::compute(int i) {
  const Module& m = (*modules_)[static_cast<std::size_t>(i)];
  for (const auto& [proto, pt] : shapes_)
    if (same_compute_shape(*proto, m)) return pt;
  shapes_.emplace_back(
      &m, std::pair{forward_time(m, *prof_, attention_), backward_time(m, *prof_, attention_)});
  return shapes_.back().second;
}

std::vector<std::uint8_t> ModuleTimes::signs() {
  std::vector<std::uint8_t> v(times_.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto [f, b] = (*this)(static_cast<int>(i));
    v[i] = static_cast<std::uint8_t>((f > 0 ? 1 : 0) | (b > 0 ? 2 : 0));
  }
  return v;
}

std::shared_ptr<const std::vector<Module>> modules_of(const StepSetup& s, ModuleCache* cache) {
  return cache
             ? cache->modules(s.model, s.tokens, s.seq)
             : std::make_shared<const std::vector<Module>>(build_modules(s.model, s.tokens, s.seq));
}

ProgramBuilder::ProgramBuilder(const StepSetup& setup, const Topology& topo,
                               const CostProfile& profile, ModuleCache* modules,
                               GroupListCache* groups, LoweredStep& out)
    : s_(setup),
      st_(setup.strategy),
      prof_(profile),
      topo_(topo),
      module_cache_(modules),
      group_cache_(groups),
      out_(out),
      prog_(out.program) {
  add_stream("compute");
  W_ = topo.gpu_count();
  N_ = topo.gpus_per_node();
}

void ProgramBuilder::load_modules() { out_.modules = modules_of(s_, module_cache_); }

void ProgramBuilder::name_modules() {
  const std::size_t M = out_.modules->size();
  name_piece_.resize(M);
  for (std::size_t i = 0; i < M; ++i) name_piece_[i] = piece({(*out_.modules)[i].name});
  times_.reset(*out_.modules, prof_, s_.attention);
  out_.tokens = s_.tokens;
  out_.module_time_signs = times_.signs();
}

void ProgramBuilder::reserve(std::size_t ops, std::size_t prefixes, std::size_t pieces,
                             std::size_t collectives) {
  for (auto& stream : prog_.streams) stream.ops.reserve(ops + 8);
  prog_.labels.reserve(ops + 1);
  prog_.prefixes.reserve(prefixes + 1);
  prog_.piece_ends.reserve(pieces + 1);
  prog_.piece_text.reserve(16 * (pieces + 1));
  prog_.collectives.reserve(collectives);
  out_.collective_phase.reserve(collectives);
  prog_.collective_class.reserve(collectives);
}

std::int64_t ProgramBuilder::total_params() const {
  return module_cache_ ? module_cache_->total_params(s_.model) : total_param_count(s_.model);
}

void ProgramBuilder::collective(int stream, CollKind kind, Algorithm algo, const GroupList& groups,
                                double bytes, Category c, CommPhase phase, int pre,
                                const char* suffix) {
  if (bytes <= 0 || groups.empty() || groups.front().size() < 2) return;
  // Braced (clang has no parenthesised aggregate init): the group list is copied once.
  prog_.collectives.push_back(CollectiveOp{kind, algo, groups, bytes, {}});
  out_.collective_phase.push_back(phase);
  // Its class: that of the first equal collective, else a new one (numbered in order of first
  // appearance, so the same for every run).
  const auto [it, fresh] =
      classes_.try_emplace(ClassKey{&groups.get(), kind, algo, bytes}, prog_.collective_classes);
  prog_.collective_class.push_back(it->second);
  prog_.collective_classes += fresh;
  const auto s = static_cast<std::size_t>(stream);
  out_.collective_slots[s].push_back(
      LoweredStep::CollectiveSlot{timed_[s], static_cast<int>(prog_.collectives.size()) - 1});
  push(stream, StepOp{OpKind::Collective, c, 0, static_cast<int>(prog_.collectives.size()) - 1, -1,
                      label(pre, suffix)});
}

void ProgramBuilder::gpu_optimizer(double part, int pre) {
  // Gradient-norm clipping, then Adam, on the local shard (compute_model.hpp).
  out_.optimizer_bytes = (kAdamBytesPerParam + kClipBytesPerParam) * part;
  compute(kCompute, Category::Optimizer, optimizer_time(part, prof_), pre, "");
}

GroupList ProgramBuilder::world_groups() {
  return layout_groups(GroupListCache::Layout::World, W_, N_, 0,
                       [&] { return world_group(topo_); });
}

GroupList ProgramBuilder::block_groups(int k) {
  if (k <= N_)
    return layout_groups(GroupListCache::Layout::IntraNode, W_, N_, k,
                         [&] { return intra_node_groups(topo_, k); });
  return layout_groups(GroupListCache::Layout::Blocks, W_, N_, k, [&] {
    GroupList::Groups g;
    for (int start = 0; start < W_; start += k) {
      g.emplace_back();
      for (int r = start; r < start + k; ++r) g.back().push_back(r);
    }
    return g;
  });
}

ProgramBuilder::ShardGroups ProgramBuilder::shard_groups() {
  ShardGroups g;
  g.size = st_.shard_ranks(W_);
  if (g.size == W_) {
    g.shard = world_groups();
    return g;
  }
  g.shard = block_groups(g.size);
  g.algo = g.size <= N_ ? Algorithm::IntraNode : Algorithm::Ring;
  g.replicas = strided_groups(g.size);
  return g;
}

GroupList ProgramBuilder::strided_groups(int k) {
  return layout_groups(GroupListCache::Layout::Strided, W_, N_, k, [&] {
    GroupList::Groups g(static_cast<std::size_t>(k));
    for (int r = 0; r < W_; ++r) g[static_cast<std::size_t>(r % k)].push_back(r);
    return g;
  });
}

GroupList ProgramBuilder::node_groups() {
  return layout_groups(GroupListCache::Layout::IntraNode, W_, N_, N_,
                       [&] { return intra_node_groups(topo_, N_); });
}

GroupList ProgramBuilder::rail_groups() {
  return layout_groups(GroupListCache::Layout::Rails, W_, N_, 0,
                       [&] { return zerosim::rail_groups(topo_); });
}

}  // namespace zerosim::lowering
