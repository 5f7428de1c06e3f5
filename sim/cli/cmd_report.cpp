// `zerosim report RESULTS.json [--format html|md|csv] [--out PATH]` (Markdown on stdout by
// default) and `zerosim compare a.json
// b.json`.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "sim/cli/commands.hpp"
#include "sim/cli/validators.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_io.hpp"
#include "sim/core/output_paths.hpp"
#include "sim/report/compare.hpp"
#include "sim/report/fsdp_switch.hpp"
#include "sim/report/html.hpp"
#include "sim/report/result_view.hpp"
#include "sim/report/tables.hpp"
#include "sim/report/training_time.hpp"

namespace zerosim::cli {

namespace {

struct ReportArgs {
  std::string input, format, out, train_tokens, gpu_hour_price;
};

std::string infer_format(const std::string& out) {
  auto ext = std::filesystem::path(out).extension().string();
  if (ext == ".html" || ext == ".htm") return "html";
  if (ext == ".md") return "md";
  if (ext == ".csv") return "csv";
  return "";
}

// The paragraphs on switching from an FSDP run to ZeRO-3 / ZeRO++ (fsdp_switch.hpp), when the
// results hold such pairs: appended to Markdown, before </body> in HTML.
void add_fsdp_switch(std::string& text, const std::string& format,
                     const std::vector<report::ResultView>& results) {
  std::vector<const report::ResultView*> views;
  views.reserve(results.size());
  for (const auto& r : results) views.push_back(&r);
  if (format == "md") {
    text += report::render_fsdp_switch_markdown(views);
    return;
  }
  const std::string section = report::render_fsdp_switch_html(views);
  const auto body_end = text.rfind("</body>");
  if (!section.empty() && body_end != std::string::npos) text.insert(body_end, section);
}

void run_report(const ReportArgs& a) {
  const report::GpuPrices prices =
      a.gpu_hour_price.empty() ? report::GpuPrices{}
                               : report::parse_gpu_prices(a.gpu_hour_price, "--gpu-hour-price");
  check_output_paths({{"results", a.input}}, {{"--out", a.out}});
  const bool to_stdout = a.out.empty() || a.out == "-";
  // On stdout a report is read in a terminal or piped on: Markdown unless asked otherwise.
  std::string format = !a.format.empty() ? a.format : to_stdout ? "md" : infer_format(a.out);
  if (format.empty())
    throw flag_error("--format",
                     fmt::format("give --format html|md|csv (the extension of --out '{}' "
                                 "is none of .html, .htm, .md, .csv)",
                                 a.out));
  const double train_tokens =
      a.train_tokens.empty() ? 0 : report::parse_token_count(a.train_tokens, "--train-tokens");
  if (prices.any() && !(train_tokens > 0))
    throw flag_error("--gpu-hour-price", "prices the time to train: give --train-tokens too");
  if (train_tokens > 0 && format == "csv")
    throw flag_error("--train-tokens", "adds a section to html and md reports, not to csv");
  begin_work();
  auto results = report::load_results(a.input);
  std::string source = std::filesystem::path(a.input).filename().string();
  std::string text = format == "html" ? report::render_html(results, source, {train_tokens, prices})
                     : format == "md"
                         ? report::render_markdown(results, source, {train_tokens, prices})
                         : report::render_csv(results);
  if (format != "csv") add_fsdp_switch(text, format, results);
  if (to_stdout) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_file_atomic(a.out, text);
    std::fprintf(stderr, "zerosim report: wrote %s (%zu scenarios)\n", a.out.c_str(),
                 results.size());
  }
}

struct CompareArgs {
  std::string a, b, out;
  std::vector<std::string> by;
};

void run_compare(const CompareArgs& c) {
  check_output_paths({{"a", c.a}, {"b", c.b}}, {{"--out", c.out}});
  begin_work();
  auto ra = report::load_results(c.a);
  auto rb = report::load_results(c.b);
  // Flag spelling (nics-per-node) or the scenario key (nics_per_node).
  std::vector<std::string> keys = c.by;
  for (std::string& k : keys) std::replace(k.begin(), k.end(), '-', '_');
  std::string text = report::render_compare(report::compare_results(ra, rb, keys), c.a, c.b);
  std::vector<report::ResultView> both = ra;
  both.insert(both.end(), rb.begin(), rb.end());
  add_fsdp_switch(text, "md", both);
  if (c.out.empty() || c.out == "-")
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_file_atomic(c.out, text);
}

}  // namespace

void register_report(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* rep = app.add_subcommand(
      "report", "Render a results file (sweep, plan or simulate JSON) as HTML, Markdown or CSV");
  rep->add_option("results", args->input, "results JSON file")->required();
  rep->add_option("--format", args->format,
                  "html | md | csv (default: from the --out extension; md on stdout)")
      ->check(CLI::IsMember({"html", "md", "csv"}));
  rep->add_option("--out", args->out, "output file (written atomically); '-' or absent: stdout");
  rep->add_option("--train-tokens", args->train_tokens,
                  "add the time to train this many tokens (e.g. 300B, 2T): days and GPU-hours "
                  "per result (html and md)");
  rep->add_option("--gpu-hour-price", args->gpu_hour_price,
                  "price of one GPU-hour (any currency) to cost the time to train: PRICE for "
                  "every GPU or TYPE=PRICE,... per GPU type, e.g. h100=4,a100=2 (matched in the "
                  "GPU model's name; default: no cost)")
      ->type_name("PRICE|TYPE=PRICE,...");
  rep->callback([args] { run_report(*args); });

  auto cargs = std::make_shared<CompareArgs>();
  auto* cmp = app.add_subcommand(
      "compare", "Diff two results files: step time and TFLOPs per scenario, delta %");
  cmp->add_option("a", cargs->a, "first results JSON (A)")->required();
  cmp->add_option("b", cargs->b, "second results JSON (B)")->required();
  cmp->add_option("--out", cargs->out, "write the table to a file instead of stdout");
  cmp->add_option(
         "--by", cargs->by,
         "pair scenarios that differ only in these scenario keys, e.g. tier, "
         "nics-per-node,nic-gbps or strategy.reduce_bucket_elems (default: identical scenarios, "
         "however given; when none match, the keys "
         "each file holds constant but the two set differently)")
      ->delimiter(',');
  cmp->callback([cargs] { run_compare(*cargs); });
}

}  // namespace zerosim::cli
