#include "calibrate/fit/nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"

namespace zerosim::calib {

namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string tok; in >> tok;) out.push_back(tok);
  return out;
}

bool is_uint(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool parse_double(const std::string& s, double& v) {
  const char* b = s.c_str();
  char* e = nullptr;
  errno = 0;
  v = std::strtod(b, &e);
  return e != b && *e == '\0' && errno == 0 && std::isfinite(v);
}

// Resolves ranks/nodes and builds the record for one measured (bytes, time_us) pair.
CollectiveRecord make_record(const NcclTestsOptions& opt, int ranks, int nodes, std::uint64_t bytes, double time_us,
                             const std::string& where) {
  CollectiveRecord r;
  r.op = opt.op;
  r.ranks = ranks;
  r.nodes = nodes;
  r.tier = tier_for_nodes(nodes);
  r.bytes = bytes;
  r.time_s = time_us * 1e-6;
  r.algbw_GBps = static_cast<double>(bytes) / r.time_s / 1e9;
  r.busbw_GBps = r.algbw_GBps * busbw_factor(parse_coll_kind(opt.op, "--op"), ranks);
  r.where = where;
  return r;
}

int resolve_ranks(const NcclTestsOptions& opt, const NcclTestsLog& log, const std::string& file) {
  if (opt.ranks > 0) return opt.ranks;
  if (log.ranks_in_log > 0) return log.ranks_in_log;
  throw InputError(file, "--ranks", "the log has no '#  Rank' lines: pass --ranks");
}

int resolve_nodes(const NcclTestsOptions& opt, const NcclTestsLog& log) {
  if (opt.nodes > 0) return opt.nodes;
  return log.hosts.empty() ? 1 : static_cast<int>(log.hosts.size());
}

struct Row {
  std::uint64_t bytes;
  double time_us;
  std::string where;
};

NcclTestsLog parse_text(const std::string& text, const std::string& file, const NcclTestsOptions& opt) {
  NcclTestsLog log;
  std::vector<Row> rows;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string where = fmt::format("{}:{}", file, lineno);
    auto tok = tokens(line);
    if (tok.empty()) continue;
    if (tok[0].starts_with("#")) {
      if (tok[0] == "#" && tok.size() >= 2 && tok[1] == "nThread") log.header = line;
      // "#  Rank  0 Group  0 Pid  1234 on  host-a device  0 [0x07] NVIDIA H100 80GB HBM3"
      auto on = std::find(tok.begin(), tok.end(), "on");
      if (tok.size() >= 3 && tok[0] == "#" && tok[1] == "Rank" && is_uint(tok[2]) && on != tok.end() &&
          on + 1 != tok.end()) {
        ++log.ranks_in_log;
        if (std::find(log.hosts.begin(), log.hosts.end(), *(on + 1)) == log.hosts.end()) log.hosts.push_back(*(on + 1));
      }
      continue;
    }
    if (!is_uint(tok[0])) continue;  // NCCL INFO/WARN lines and other chatter
    // size count type [redop] [root] + 8 result columns.
    if (tok.size() < 11 || tok.size() > 13)
      throw InputError(where, "row",
                       fmt::format("result row has {} columns; expected 'size count type [redop] [root] time algbw "
                                   "busbw #wrong time algbw busbw #wrong' (11 to 13)",
                                   tok.size()));
    std::size_t base = tok.size() - 8 + (opt.in_place ? 4 : 0);
    static const char* names[] = {"time", "algbw", "busbw", "#wrong"};
    double vals[3];
    for (int c = 0; c < 3; ++c)
      if (!parse_double(tok[base + c], vals[c]) || vals[c] < 0)
        throw InputError(where, names[c], fmt::format("'{}' is not a non-negative number", tok[base + c]));
    const std::string& wrong = tok[base + 3];
    if (is_uint(wrong)) {
      if (wrong.find_first_not_of('0') != std::string::npos)  // any non-zero count; no stoull overflow
        throw InputError(where, "#wrong", fmt::format("{} wrong elements: the run failed validation", wrong));
    } else if (wrong != "N/A") {
      double e;
      if (!parse_double(wrong, e)) throw InputError(where, "#wrong", fmt::format("'{}' is not a count, N/A or an error value", wrong));
    }
    std::uint64_t bytes = 0;
    auto [p, ec] = std::from_chars(tok[0].data(), tok[0].data() + tok[0].size(), bytes);
    if (ec != std::errc() || bytes == 0) {
      if (tok[0] == "0") continue;  // nccl-tests prints size-0 rows for ops where a step rounds to zero
      throw InputError(where, "size", fmt::format("'{}' is not a byte count", tok[0]));
    }
    if (!(vals[0] > 0)) throw InputError(where, "time", "time must be positive");
    rows.push_back({bytes, vals[0], where});
  }
  if (rows.empty())
    throw InputError(file, "", "no nccl-tests result rows found (expected lines 'size count type ... time algbw busbw ...')");
  int ranks = resolve_ranks(opt, log, file), nodes = resolve_nodes(opt, log);
  for (const auto& r : rows) log.records.push_back(make_record(opt, ranks, nodes, r.bytes, r.time_us, r.where));
  return log;
}

NcclTestsLog parse_json_log(const std::string& text, const std::string& file, const NcclTestsOptions& opt) {
  json j = parse_json_text(text, file);
  JsonReader r(j, file);
  JsonReader results = r.at("results");
  std::size_t n = results.array_size();
  if (n == 0) results.fail("no results");
  NcclTestsLog log;
  int ranks = resolve_ranks(opt, log, file), nodes = resolve_nodes(opt, log);
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader row = results.at(i);
    auto bytes = static_cast<std::uint64_t>(row.at("size").get_int_at_least(0));
    JsonReader res = row.at(opt.in_place ? "in_place" : "out_of_place");
    for (const char* wk : {"nwrong", "wrong"})
      if (res.has(wk) && res.at(wk).value().is_number() && res.at(wk).get_number() > 0)
        res.at(wk).fail("the run failed validation (wrong elements > 0)");
    double time_us = res.at("time").get_positive();
    if (bytes == 0) continue;
    log.records.push_back(make_record(opt, ranks, nodes, bytes, time_us, fmt::format("{}:{}", file, row.path())));
  }
  if (log.records.empty()) results.fail("no results with a positive size");
  return log;
}

}  // namespace

NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file, const NcclTestsOptions& opt) {
  parse_coll_kind(opt.op, "--op");  // throws InputError naming --op
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_json_log(text, file, opt);
  return parse_text(text, file, opt);
}

NcclTestsLog load_nccl_tests(const std::string& path, const NcclTestsOptions& opt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "log file cannot be opened for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_nccl_tests(ss.str(), path, opt);
}

}  // namespace zerosim::calib
