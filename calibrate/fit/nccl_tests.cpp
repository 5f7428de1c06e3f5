#include "calibrate/fit/nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "sim/collectives/collective.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"

namespace zerosim::calib {

namespace {

// GPU names as nccl-tests prints them (cudaDeviceProp::name) -> zerosim gpu_model strings (the
// "gpu_model" of topologies/ and calibrate/profiles/). A prefix entry matches every name starting
// with it.
struct GpuName {
  const char* nccl_name;
  bool prefix;
  const char* gpu_model;
};
constexpr GpuName kGpuNames[] = {
    {"NVIDIA H100 80GB HBM3", false, "H100-SXM5-80GB"},
    {"NVIDIA A100-SXM4-80GB", false, "A100-SXM4-80GB"},
    {"NVIDIA A100-SXM4-40GB", false, "A100-SXM4-40GB"},
    {"NVIDIA H200", true, "H200-SXM-141GB"},           // "NVIDIA H200", "NVIDIA H200 NVL", ...
    {"Tesla V100-SXM3-32GB", true, "V100-SXM3-32GB"},  // also the DGX-2H's "...-32GB-H"
};

// nccl-tests' test names (without "_perf", '_' removed) -> zerosim ops.
constexpr std::pair<const char*, const char*> kTestOps[] = {
    {"allreduce", "all_reduce"}, {"allgather", "all_gather"}, {"reducescatter", "reduce_scatter"},
    {"alltoall", "all_to_all"},  {"sendrecv", "send_recv"},
};

// File-name substrings -> zerosim ops.
constexpr std::pair<const char*, const char*> kFileNameOps[] = {
    {"all_reduce", "all_reduce"},
    {"allreduce", "all_reduce"},
    {"all_gather", "all_gather"},
    {"allgather", "all_gather"},
    {"reduce_scatter", "reduce_scatter"},
    {"reducescatter", "reduce_scatter"},
    {"alltoall", "all_to_all"},
    {"all_to_all", "all_to_all"},
    {"sendrecv", "send_recv"},
    {"send_recv", "send_recv"},
};

// Bytes per element of nccl-tests' type names (other names are accepted without the count check).
constexpr std::pair<const char*, int> kTypeBytes[] = {
    {"int8", 1},     {"uint8", 1},    {"char", 1},   {"int32", 4},   {"uint32", 4},
    {"int", 4},      {"int64", 8},    {"uint64", 8}, {"half", 2},    {"float16", 2},
    {"float", 4},    {"float32", 4},  {"double", 8}, {"float64", 8}, {"bfloat16", 2},
    {"fp8_e4m3", 1}, {"fp8_e5m2", 1}, {"f8e4m3", 1}, {"f8e5m2", 1},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string tok; in >> tok;) out.push_back(tok);
  return out;
}

bool is_uint(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool parse_u64(const std::string& s, std::uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_double(const std::string& s, double& v) {
  const char* b = s.c_str();
  char* e = nullptr;
  errno = 0;
  v = std::strtod(b, &e);
  return e != b && *e == '\0' && errno == 0 && std::isfinite(v);
}

bool valid_type_name(const std::string& s) {
  return !s.empty() && std::isalpha(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

int type_bytes(const std::string& type) {
  for (const auto& [name, bytes] : kTypeBytes)
    if (type == name) return bytes;
  return 0;
}

// A measured row, before its section's ranks are known.
struct Row {
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> count;
  std::string type;
  double time_us = 0;
  std::string where;       // record's "where": "file:line" or "file:/results/3"
  std::string err_file;    // InputError file of this row: "file:line" or file
  std::string count_path;  // InputError path of the count: "count" or "/results/3/count"
};

// A section being read: one collective test.
struct Pending {
  NcclTestsSection sec;
  bool named = false;               // its op came from the log (section line or JSON key)
  bool skip = false;                // a test zerosim has no op for
  std::vector<long long> rank_ids;  // distinct
  std::vector<std::pair<std::string, int>> ranks_on_host;        // host -> distinct ranks on it
  std::vector<std::string> devices;                              // distinct GPU names
  int declared_ranks = 0, declared_nodes = 0, declared_gpn = 0;  // from JSON sources
  int gpus_per_thread = 0;  // from a JSON source's nGpus; 0: the run header's (text logs)
  std::vector<Row> rows;
  int zero_rows = 0;     // rows of size 0 (skipped)
  int skipped_rows = 0;  // rows of a skipped section
  bool has_content() const {
    return !rows.empty() || !rank_ids.empty() || zero_rows > 0 || skipped_rows > 0;
  }

  void add_rank(long long id, const std::string& host, const std::string& device) {
    if (std::find(rank_ids.begin(), rank_ids.end(), id) != rank_ids.end()) return;
    rank_ids.push_back(id);
    if (!host.empty()) {
      auto it = std::find_if(ranks_on_host.begin(), ranks_on_host.end(),
                             [&](const auto& h) { return h.first == host; });
      if (it == ranks_on_host.end())
        ranks_on_host.emplace_back(host, 1);
      else
        ++it->second;
    }
    if (!device.empty() && std::find(devices.begin(), devices.end(), device) == devices.end())
      devices.push_back(device);
  }
};

// Reads a log's sections and turns them into records.
class Importer {
 public:
  Importer(const std::string& file, const NcclTestsOptions& opt) : file_(file), opt_(opt) {}

  // Opens a section for `test` ("" = the log does not name one) at `where`.
  Pending open(const std::string& test, const std::string& where) const {
    Pending p;
    p.sec.where = where;
    if (!test.empty()) {
      p.named = true;
      p.sec.test = test;
      p.sec.op = nccl_tests_op_from_test(test);
      p.skip = p.sec.op.empty();
    }
    return p;
  }

  void finish(Pending&& p) {
    if (!p.named && !p.has_content()) return;  // e.g. the lines before the first section line
    NcclTestsSection& s = p.sec;
    std::string label = s.test.empty() ? "rows" : s.test + " section";
    if (p.zero_rows > 0)
      log_.notes.push_back(fmt::format("{}: {} row(s) of size 0 skipped{}", s.where, p.zero_rows,
                                       s.test.empty() ? "" : " in the " + label));
    if (p.skip) {
      log_.notes.push_back(fmt::format("{}: {} skipped ({} row(s)): zerosim has no such collective",
                                       s.where, label, p.skipped_rows));
      any_rows_ = any_rows_ || p.skipped_rows > 0;
      log_.sections.push_back(std::move(s));
      return;
    }
    any_rows_ = any_rows_ || !p.rows.empty() || p.zero_rows > 0;
    if (!p.named) s.op = fallback_op(p.rows.empty());
    add_devices(p);
    if (!opt_.op.empty() && s.op != opt_.op) {
      if (!p.rows.empty())
        log_.notes.push_back(fmt::format("{}: {} ({} {} row(s)) left out by --op {}", s.where,
                                         label, p.rows.size(), s.op, opt_.op));
      filtered_.push_back(fmt::format("{} ({})", s.test.empty() ? s.op : s.test, s.where));
      log_.sections.push_back(std::move(s));
      return;
    }
    if (p.rows.empty()) {
      log_.sections.push_back(std::move(s));
      return;
    }
    resolve_shape(p);
    const int gpt = p.gpus_per_thread > 0 ? p.gpus_per_thread : gpus_per_thread_;
    if (gpt > s.gpus_per_node)
      throw InputError(file_, "nGpus",
                       fmt::format("{} GPUs per thread at {}, but the section has {} rank(s) per "
                                   "node: a thread drives GPUs of its own node",
                                   gpt, s.where, s.gpus_per_node));
    CollKind kind = parse_coll_kind(s.op, "--op");
    for (const Row& r : p.rows) {
      check_count(r, s.op, s.ranks);
      CollectiveRecord c;
      c.op = s.op;
      c.ranks = s.ranks;
      c.nodes = s.nodes;
      c.gpus_per_node = s.gpus_per_node;
      c.gpus_per_thread = gpt;
      c.tier = tier_for_nodes(s.nodes);
      c.bytes = r.bytes;
      c.time_s = r.time_us * 1e-6;
      c.algbw_GBps = static_cast<double>(r.bytes) / c.time_s / 1e9;
      c.busbw_GBps = c.algbw_GBps * busbw_factor(kind, s.ranks);
      c.where = r.where;
      log_.records.push_back(c);
    }
    s.rows = static_cast<int>(p.rows.size());
    log_.sections.push_back(std::move(s));
  }

  NcclTestsLog done() {
    if (log_.records.empty()) {
      if (!filtered_.empty() && any_rows_)
        throw InputError(file_, "--op",
                         fmt::format("no {} rows: the log holds {}; --op keeps only {} rows",
                                     opt_.op, fmt::join(filtered_, ", "), opt_.op));
      if (any_rows_)
        throw InputError(file_, "",
                         "no result rows with a positive size of a collective zerosim models "
                         "(broadcast, reduce, gather, scatter and hypercube sections are skipped)");
      throw InputError(file_, "",
                       "no nccl-tests result rows found (expected lines 'size count type ... time "
                       "algbw busbw ...')");
    }
    // The log's GPU: the one every section agrees on.
    bool mixed = devices_.size() > 1;
    if (devices_.size() == 1) log_.device = devices_.front();
    if (mixed) log_.notes.push_back("the Rank lines name different GPUs: no gpu_model");
    log_.gpu_model = nccl_tests_gpu_model(log_.device);
    if (!log_.device.empty() && log_.gpu_model.empty())
      log_.notes.push_back(
          fmt::format("GPU '{}' has no zerosim gpu_model: pass --base to fit", log_.device));
    return std::move(log_);
  }

  NcclTestsLog& log() { return log_; }
  // The run header's "nGpus G": GPUs each benchmark thread drives, for the sections that follow.
  void set_gpus_per_thread(int g) { gpus_per_thread_ = g; }
  const std::string& file() const { return file_; }
  const NcclTestsOptions& opt() const { return opt_; }

 private:
  // The op of rows no section names: --op, else the file name's.
  std::string fallback_op(bool no_rows) const {
    if (!opt_.op.empty()) return opt_.op;
    std::string op = nccl_tests_op_from_file_name(file_);
    if (op.empty() && !no_rows)
      throw InputError(
          file_, "--op",
          "the log has no '# Collective test starting:' line and its file name names "
          "no collective (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv): "
          "pass --op");
    return op;
  }

  void add_devices(const Pending& p) {
    for (const auto& d : p.devices)
      if (std::find(devices_.begin(), devices_.end(), d) == devices_.end()) devices_.push_back(d);
    for (const auto& [host, n] : p.ranks_on_host)
      if (std::find(log_.hosts.begin(), log_.hosts.end(), host) == log_.hosts.end())
        log_.hosts.push_back(host);
    if (log_.ranks_in_log == 0) log_.ranks_in_log = static_cast<int>(p.rank_ids.size());
  }

  // Ranks, nodes and ranks per node of a section with rows.
  void resolve_shape(Pending& p) const {
    NcclTestsSection& s = p.sec;
    for (const auto& [host, n] : p.ranks_on_host) s.hosts.push_back(host);
    if (p.devices.size() == 1) s.device = p.devices.front();
    if (opt_.ranks > 0)
      s.ranks = opt_.ranks;
    else if (p.declared_ranks > 0)
      s.ranks = p.declared_ranks;
    else if (!p.rank_ids.empty())
      s.ranks = static_cast<int>(p.rank_ids.size());
    else
      throw InputError(file_, "--ranks", "the log has no '#  Rank' lines: pass --ranks");
    if (opt_.nodes > 0)
      s.nodes = opt_.nodes;
    else if (p.declared_nodes > 0)
      s.nodes = p.declared_nodes;
    else
      s.nodes = p.ranks_on_host.empty() ? 1 : static_cast<int>(p.ranks_on_host.size());
    if (s.nodes > s.ranks)
      throw InputError(
          file_, opt_.nodes > 0 ? "--nodes" : "",
          fmt::format("{} nodes for {} ranks: nodes must not exceed ranks", s.nodes, s.ranks));
    bool overridden = opt_.ranks > 0 || opt_.nodes > 0;
    int most = 0;
    for (const auto& [host, n] : p.ranks_on_host) most = std::max(most, n);
    if (!overridden && p.declared_gpn > 0)
      s.gpus_per_node = p.declared_gpn;
    else if (!overridden && most > 0 && static_cast<long long>(most) * s.nodes >= s.ranks)
      s.gpus_per_node = most;
    else
      s.gpus_per_node = (s.ranks + s.nodes - 1) / s.nodes;
  }

  // nccl-tests prints size = count x type size (x ranks for all_gather, reduce_scatter, alltoall).
  void check_count(const Row& r, const std::string& op, int ranks) const {
    int tb = type_bytes(r.type);
    if (!r.count || tb == 0) return;
    bool per_rank = op == "all_gather" || op == "reduce_scatter" || op == "all_to_all";
    std::uint64_t unit = static_cast<std::uint64_t>(tb) *
                         (per_rank ? static_cast<std::uint64_t>(ranks) : std::uint64_t{1});
    if (r.bytes % unit != 0 || r.bytes / unit != *r.count)
      throw InputError(
          r.err_file, r.count_path,
          fmt::format("count {} does not match size {} for {} of {} over {} ranks: nccl-tests "
                      "prints size = count x {} B{} (is the op or the rank count wrong?)",
                      *r.count, r.bytes, op, r.type, ranks, tb, per_rank ? " x ranks" : ""));
  }

  std::string file_;
  NcclTestsOptions opt_;
  int gpus_per_thread_ = 1;
  NcclTestsLog log_;
  std::vector<std::string> devices_;   // distinct GPU names over the sections read
  std::vector<std::string> filtered_;  // sections left out by --op
  bool any_rows_ = false;              // any result row at all, recorded or not
};

// "# Collective test starting: all_gather_perf" -> "all_gather_perf"; "" for other lines.
std::string section_test(const std::string& line) {
  static const std::string kMark = "Collective test starting:";
  auto at = line.find(kMark);
  if (at == std::string::npos) return "";
  std::string rest = trim(line.substr(at + kMark.size()));
  auto tok = tokens(rest);
  return tok.empty() ? "" : tok.front();
}

// A "#" line of the text: a section's start, a run's header or a Rank line (others are comments).
void read_comment_line(Importer& imp, Pending& cur, const std::string& line,
                       const std::vector<std::string>& tok, const std::string& where) {
  if (std::string test = section_test(line); !test.empty()) {
    imp.finish(std::move(cur));
    cur = imp.open(test, where);
    return;
  }
  if (tok[0] == "#" && tok.size() >= 2 && tok[1] == "nThread") {
    if (imp.log().header.empty()) imp.log().header = trim(line);
    // "# nThread T nGpus G ...": each thread drives G GPUs.
    auto g = std::find(tok.begin(), tok.end(), "nGpus");
    if (g != tok.end()) {
      std::uint64_t n = 0;
      if (g + 1 == tok.end() || !parse_u64(*(g + 1), n) || n < 1 || n > 1024)
        throw InputError(
            where, "nGpus",
            fmt::format("'{}' is not a GPU count (1 to 1024)", g + 1 == tok.end() ? "" : *(g + 1)));
      imp.set_gpus_per_thread(static_cast<int>(n));
    }
    if (cur.has_content()) {  // a second run without a section line: same op, new ranks
      std::string test = cur.sec.test;
      imp.finish(std::move(cur));
      cur = imp.open(test, where);
    } else if (!cur.named) {
      cur.sec.where = where;
    }
    return;
  }
  // "#  Rank  0 Group  0 Pid  1234 on  host-a device  0 [0x07] NVIDIA H100 80GB HBM3"
  auto on = std::find(tok.begin(), tok.end(), "on");
  if (tok.size() >= 3 && tok[0] == "#" && tok[1] == "Rank" && is_uint(tok[2]) &&
      tok[2].size() < 10 && on != tok.end() && on + 1 != tok.end()) {
    std::string device;
    auto dev = line.find(" device ");
    auto bracket = dev == std::string::npos ? dev : line.find(']', dev);
    if (bracket != std::string::npos) device = trim(line.substr(bracket + 1));
    cur.add_rank(std::stoll(tok[2]), *(on + 1), device);
  }
}

// The #wrong column: 0, N/A or an error value; a non-zero count means the run failed validation.
void check_wrong_column(const std::string& wrong, const std::string& where) {
  if (is_uint(wrong)) {
    if (wrong.find_first_not_of('0') != std::string::npos)  // any non-zero count; no overflow
      throw InputError(where, "#wrong",
                       fmt::format("{} wrong elements: the run failed validation", wrong));
  } else if (wrong != "N/A") {
    double e;
    if (!parse_double(wrong, e))
      throw InputError(where, "#wrong",
                       fmt::format("'{}' is not a count, N/A or an error value", wrong));
  }
}

// A result row: size count type [redop] [root] + 8 result columns (out-of-place, then in-place;
// opt.in_place reads the second four). Size-0 rows are counted, not recorded.
void read_result_row(const std::vector<std::string>& tok, const std::string& where,
                     const NcclTestsOptions& opt, Pending& cur) {
  if (tok.size() < 11 || tok.size() > 13)
    throw InputError(where, "row",
                     fmt::format("result row has {} columns; expected 'size count type [redop] "
                                 "[root] time algbw busbw #wrong time algbw busbw #wrong' (11 to "
                                 "13)",
                                 tok.size()));
  std::size_t base = tok.size() - 8 + (opt.in_place ? 4 : 0);
  static const char* names[] = {"time", "algbw", "busbw", "#wrong"};
  double vals[3];
  for (int c = 0; c < 3; ++c)
    if (!parse_double(tok[base + c], vals[c]) || vals[c] < 0)
      throw InputError(where, names[c],
                       fmt::format("'{}' is not a non-negative number", tok[base + c]));
  check_wrong_column(tok[base + 3], where);
  Row row;
  if (!parse_u64(tok[0], row.bytes))
    throw InputError(where, "size", fmt::format("'{}' is not a byte count", tok[0]));
  std::uint64_t count = 0;
  if (!parse_u64(tok[1], count))
    throw InputError(where, "count", fmt::format("'{}' is not an element count", tok[1]));
  if (!valid_type_name(tok[2]))
    throw InputError(where, "type", fmt::format("'{}' is not a data type name", tok[2]));
  if (row.bytes == 0) {  // nccl-tests prints size-0 rows where a step rounds to zero
    ++cur.zero_rows;
    return;
  }
  if (!(vals[0] > 0)) throw InputError(where, "time", "time must be positive");
  row.count = count;
  row.type = tok[2];
  row.time_us = vals[0];
  row.where = where;
  row.err_file = where;
  row.count_path = "count";
  cur.rows.push_back(std::move(row));
}

NcclTestsLog parse_text(const std::string& text, const std::string& file,
                        const NcclTestsOptions& opt) {
  Importer imp(file, opt);
  Pending cur = imp.open("", file + ":1");
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string where = fmt::format("{}:{}", file, lineno);
    auto tok = tokens(line);
    if (tok.empty()) continue;
    if (tok[0].starts_with("#")) {
      read_comment_line(imp, cur, line, tok, where);
      continue;
    }
    if (!is_uint(tok[0])) continue;  // NCCL INFO/WARN lines and other chatter
    if (cur.skip) {
      ++cur.skipped_rows;
      continue;
    }
    read_result_row(tok, where, opt, cur);
  }
  imp.finish(std::move(cur));
  return imp.done();
}

// Where a -J JSON object may hold its run's settings: itself and its "config" object.
std::vector<JsonReader> json_scopes(const JsonReader& r) {
  std::vector<JsonReader> where = {r};
  if (r.has("config") && r.at("config").value().is_object()) where.push_back(r.at("config"));
  return where;
}

// A string naming the test of a -J JSON object, under the keys nccl-tests versions may use.
std::optional<std::pair<std::string, std::string>> json_test(const JsonReader& r) {
  static const char* kKeys[] = {"collective", "test", "name", "op", "test_name"};
  for (const JsonReader& o : json_scopes(r))
    for (const char* k : kKeys) {
      if (!o.has(k) || !o.at(k).value().is_string()) continue;
      std::string v = o.at(k).value().get<std::string>();
      if (v.ends_with("_perf") || !nccl_tests_op_from_test(v).empty())
        return std::make_pair(v, o.at(k).path());
    }
  return std::nullopt;
}

void read_json_devices(const JsonReader& obj, Pending& p) {
  for (const char* list : {"devices", "ranks"}) {
    if (!obj.has(list) || !obj.at(list).value().is_array()) continue;
    JsonReader devs = obj.at(list);
    for (std::size_t i = 0; i < devs.array_size(); ++i) {
      JsonReader d = devs.at(i);
      if (!d.value().is_object()) d.fail("must be an object describing one rank");
      std::string host, name;
      for (const char* k : {"hostname", "host"})
        if (d.has(k)) host = d.at(k).get_string();
      for (const char* k : {"name", "device_name"})
        if (d.has(k)) name = d.at(k).get_string();
      long long id = d.has("rank") ? d.at("rank").get_int_at_least(0) : static_cast<long long>(i);
      p.add_rank(id, host, name);
    }
    return;
  }
  for (const char* k : {"nranks", "nRanks", "world_size", "ranks"})
    if (obj.has(k) && obj.at(k).value().is_number()) {
      p.declared_ranks = obj.at(k).get_int32_at_least(1);
      return;
    }
}

// One -J JSON object: a collective's "results".
void read_nccl_json_object(Importer& imp, const JsonReader& r) {
  if (!r.value().is_object()) r.fail("must be an object (an nccl-tests -J result)");
  auto test = json_test(r);
  std::string path = test ? test->second : r.path();
  Pending p =
      imp.open(test ? test->first : "", path.empty() ? imp.file() : imp.file() + ":" + path);
  read_json_devices(r, p);
  if (r.has("config") && r.at("config").value().is_object() && p.rank_ids.empty() &&
      p.declared_ranks == 0)
    read_json_devices(r.at("config"), p);
  for (const JsonReader& o : json_scopes(r))
    if (o.has("nGpus")) p.gpus_per_thread = o.at("nGpus").get_int32_at_least(1);
  JsonReader results = r.at("results");
  std::size_t n = results.array_size();
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader row = results.at(i);
    if (!row.value().is_object()) row.fail("must be an object (one result row)");
    if (p.skip) {
      ++p.skipped_rows;
      continue;
    }
    Row out;
    out.bytes = static_cast<std::uint64_t>(row.at("size").get_int_at_least(0));
    if (out.bytes == 0) {  // as in text logs: a step that rounds to zero
      ++p.zero_rows;
      continue;
    }
    if (row.has("count"))
      out.count = static_cast<std::uint64_t>(row.at("count").get_int_at_least(0));
    if (row.has("type")) {
      out.type = row.at("type").get_string();
      if (!valid_type_name(out.type)) row.at("type").fail("is not a data type name");
    }
    JsonReader res = row.at(imp.opt().in_place ? "in_place" : "out_of_place");
    for (const char* wk : {"nwrong", "wrong"}) {
      if (!res.has(wk)) continue;
      const json& w = res.at(wk).value();
      if (w.is_number()) {
        if (res.at(wk).get_number() != 0)
          res.at(wk).fail("the run failed validation (wrong elements != 0)");
      } else if (!w.is_null() && !(w.is_string() && w.get<std::string>() == "N/A")) {
        res.at(wk).fail("must be a count, null or \"N/A\"");
      }
    }
    for (const char* k : {"algbw", "busbw"})
      if (res.has(k)) res.at(k).get_nonnegative();
    out.time_us = res.at("time").get_positive();
    out.where = fmt::format("{}:{}", imp.file(), row.path());
    out.err_file = imp.file();
    out.count_path = row.path() + "/count";
    p.rows.push_back(std::move(out));
  }
  imp.finish(std::move(p));
}

// `zerosim collective --json`.
void read_zerosim_json(Importer& imp, const JsonReader& r) {
  JsonReader opr = r.at("op");
  std::string op = opr.get_string();
  try {
    parse_coll_kind(op, "op");
  } catch (const InputError& e) {
    opr.fail(e.rule());
  }
  Pending p = imp.open(op, fmt::format("{}:{}", imp.file(), opr.path()));
  p.sec.test = "zerosim collective " + op;
  int ranks = r.at("ranks").get_int32_at_least(1);
  int gpn = r.at("gpus_per_node").get_int32_at_least(1);
  p.declared_ranks = ranks;
  if (r.has("rank_nodes")) {
    p.declared_nodes = r.at("rank_nodes").get_int32_at_least(1);
    if (p.declared_nodes > ranks)
      r.at("rank_nodes").fail(fmt::format("must not exceed ranks ({})", ranks));
    p.declared_gpn = (ranks + p.declared_nodes - 1) / p.declared_nodes;
  } else {
    p.declared_nodes = (ranks + gpn - 1) / gpn;
    p.declared_gpn = std::min(gpn, ranks);
  }
  if (r.has("gpus_per_thread")) p.gpus_per_thread = r.at("gpus_per_thread").get_int32_at_least(1);
  if (r.has("gpu_model")) {
    std::string model = r.at("gpu_model").get_string();
    if (!model.empty()) p.devices.push_back(model);
  }
  JsonReader rows = r.at("rows");
  std::size_t n = rows.array_size();
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader row = rows.at(i);
    if (!row.value().is_object()) row.fail("must be an object (one result row)");
    Row out;
    out.bytes = static_cast<std::uint64_t>(row.at("size_bytes").get_int_at_least(0));
    for (const char* k : {"algbw_GBps", "busbw_GBps"})
      if (row.has(k)) row.at(k).get_nonnegative();
    if (row.has("type")) row.at("type").get_string();
    if (row.has("count")) row.at("count").get_int_at_least(0);
    double time_us = row.at("time_us").get_positive();
    if (out.bytes == 0) {
      ++p.zero_rows;
      continue;
    }
    out.time_us = time_us;
    out.where = fmt::format("{}:{}", imp.file(), row.path());
    out.err_file = imp.file();
    p.rows.push_back(std::move(out));
  }
  imp.finish(std::move(p));
}

// Splits text holding JSON values one after another into those values' texts (strings and
// escapes respected); one element when the text is a single value (or malformed).
std::vector<std::string_view> split_json_values(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  bool in_string = false, escape = false;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (depth++ == 0) start = i;
    } else if (c == '}' || c == ']') {
      if (--depth == 0 && start != std::string_view::npos) {
        out.push_back(text.substr(start, i - start + 1));
        start = std::string_view::npos;
      }
      if (depth < 0) return {text};
    } else if (depth == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      return {text};  // a scalar or junk between values: let the JSON parser name it
    }
  }
  if (depth != 0 || in_string || out.empty()) return {text};
  return out;
}

NcclTestsLog parse_json_log(const std::string& text, const std::string& file,
                            const NcclTestsOptions& opt) {
  Importer imp(file, opt);
  std::vector<std::string_view> parts = split_json_values(text);
  std::vector<json> docs;
  docs.reserve(parts.size());
  for (auto part : parts) docs.push_back(parse_json_text(part, file));
  // One value per collective: several values one after another, or one array of them.
  std::vector<JsonReader> objects;
  if (docs.size() == 1 && docs.front().is_array()) {
    JsonReader all(docs.front(), file);
    for (std::size_t i = 0; i < all.array_size(); ++i) objects.push_back(all.at(i));
    if (objects.empty()) all.fail("no results");
  } else {
    for (std::size_t i = 0; i < docs.size(); ++i)
      objects.emplace_back(docs[i], file, docs.size() == 1 ? "" : "/" + std::to_string(i));
  }
  for (const JsonReader& r : objects) {
    if (r.has("command")) {
      std::string command = r.at("command").get_string();
      if (command != "collective")
        r.at("command").fail(fmt::format(
            "'{}' output holds no collective measurements (import `zerosim collective --json`)",
            command));
      read_zerosim_json(imp, r);
    } else {
      read_nccl_json_object(imp, r);
    }
  }
  return imp.done();
}

}  // namespace

std::string nccl_tests_gpu_model(const std::string& device_name) {
  std::string name = trim(device_name);
  if (name.empty()) return "";
  for (const auto& g : kGpuNames)
    if (name == g.gpu_model) return g.gpu_model;
  for (const auto& g : kGpuNames)
    if (g.prefix ? name.starts_with(g.nccl_name) : name == g.nccl_name) return g.gpu_model;
  return "";
}

std::string nccl_tests_op_from_test(const std::string& test) {
  std::string t = lower(test);
  if (t.ends_with("_perf")) t.resize(t.size() - 5);
  std::erase(t, '_');
  for (const auto& [name, op] : kTestOps)
    if (t == name) return op;
  return "";
}

std::string nccl_tests_op_from_file_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = lower(slash == std::string::npos ? path : path.substr(slash + 1));
  std::string found;
  for (const auto& [sub, op] : kFileNameOps) {
    if (base.find(sub) == std::string::npos || found == op) continue;
    if (!found.empty()) return "";  // names several collectives
    found = op;
  }
  return found;
}

NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file,
                              const NcclTestsOptions& opt) {
  if (!opt.op.empty()) parse_coll_kind(opt.op, "--op");  // throws InputError naming --op
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_json_log(text, file, opt);
  if (first != std::string::npos && text[first] == '[') {  // a JSON array of -J objects
    auto next = text.find_first_not_of(" \t\r\n", first + 1);
    if (next == std::string::npos || text[next] == '{' || text[next] == ']')
      return parse_json_log(text, file, opt);
  }
  // zerosim collective's console table (sim/cli/cmd_collective.cpp) has no count of wrong
  // elements, no in-place columns and its ranks only in prose: say which outputs import.
  if (first != std::string::npos && text.compare(first, 21, "# zerosim collective:") == 0)
    throw InputError(file, "",
                     "this is zerosim collective's console table, not an nccl-tests log: write "
                     "it with `zerosim collective --nccl-tests` or `--json` to import it");
  return parse_text(text, file, opt);
}

NcclTestsLog load_nccl_tests(const std::string& path, const NcclTestsOptions& opt) {
  return parse_nccl_tests(read_input_file(path), path, opt);
}

}  // namespace zerosim::calib
