// The HTML report renders in headless Chromium with every chart non-empty: each chart is
// screenshotted on its own page and the PNG must show the chart's data colors (exact fills of its
// bars/markers) over a non-trivial number of pixels, plus many distinct colors overall. So do the
// sections of real sweeps' reports: the scaling charts of a nodes sweep, the chart of a
// tokens-per-GPU sweep and the time-to-train table (a line of text per scenario). The main job's
// report (scripts/main.sh's sweep, simulated here) is rendered as a 1400 px page whose top is
// docs/report-screenshot.png: written there when ZEROSIM_UPDATE_SCREENSHOT=1
// (scripts/update-golden.sh sets it). Skipped, visibly (exit code 77), without Chromium or libpng.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "../sweep/fake_results.hpp"
#include "real_sweeps.hpp"
#include "sim/report/html.hpp"
#include "sim/report/result_view.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/skip.hpp"

#ifdef ZEROSIM_HAVE_PNG
#include <png.h>
#endif

using namespace zerosim;
namespace fs = std::filesystem;

namespace {

const char* kChromium = "/usr/bin/chromium";

#ifdef ZEROSIM_HAVE_PNG
// RGBA pixels of a PNG, or empty on failure.
std::vector<std::uint32_t> read_png(const std::string& path, int& w, int& h) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return {};
  image.format = PNG_FORMAT_RGBA;
  std::vector<std::uint32_t> px(PNG_IMAGE_SIZE(image) / 4);
  if (!png_image_finish_read(&image, nullptr, px.data(), 0, nullptr)) return {};
  w = static_cast<int>(image.width);
  h = static_cast<int>(image.height);
  return px;
}
#endif

// Screenshots `html_path` at width x height into png_path with a throwaway profile.
bool screenshot(const fs::path& html_path, const fs::path& png_path, int width, int height) {
  fs::path profile = html_path.parent_path() / "chromium-profile";
  std::string cmd = std::string("timeout 120 ") + kChromium +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                    " --disable-background-networking --disable-component-update --disable-sync"
                    " --hide-scrollbars --user-data-dir=" +
                    profile.string() + " --screenshot=" + png_path.string() +
                    " --window-size=" + std::to_string(width) + "," + std::to_string(height) +
                    " file://" + html_path.string() + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return rc == 0 && fs::exists(png_path) && fs::file_size(png_path) > 0;
}

void require_chromium() {
  if (::access(kChromium, X_OK) != 0)
    zerosim::testing::skip_executable(std::string(kChromium) +
                                      " not found (install Debian's chromium)");
#ifndef ZEROSIM_HAVE_PNG
  zerosim::testing::skip_executable(
      "built without libpng (install libpng-dev), cannot decode screenshots");
#endif
}

#ifdef ZEROSIM_HAVE_PNG
// A scratch directory for pages and screenshots, removed at the end of its scope.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("zerosim_chromium_" + name + "_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

// Screenshots `body` on a page of its own (with the report's <head>, so its styles apply) and
// returns its pixels; fails the test when Chromium gives no image.
std::vector<std::uint32_t> render(const fs::path& dir, const std::string& name,
                                  const std::string& head, const std::string& body, int width,
                                  int height) {
  const fs::path page = dir / (name + ".html");
  std::ofstream(page) << head << "<body style=\"margin:8px\">" << body << "</body></html>";
  const fs::path png = dir / (name + ".png");
  REQUIRE(screenshot(page, png, width, height));
  int pw = 0, ph = 0;
  std::vector<std::uint32_t> px = read_png(png.string(), pw, ph);
  REQUIRE(!px.empty());
  CHECK(pw == width);
  CHECK(ph == height);
  return px;
}

// Screenshots each chart of `html` whose title starts with one of `titles` (all when empty) and
// checks that it shows its data: the exact colors of its bars and markers over a visible number
// of pixels, and many distinct colors overall. Returns the number of charts checked.
std::size_t check_charts(const std::string& html, const fs::path& dir,
                         const std::vector<std::string>& titles = {}) {
  static const std::regex fill_re("class=\"data\"[^>]*?(?:fill|stroke)=\"#([0-9A-Fa-f]{6})\"");
  const std::sregex_iterator end;
  std::size_t n = 0;
  // Each <svg>...</svg> chart by string search: libstdc++'s regex recurses once per character
  // of a lazy match, which overflows the stack on a whole chart (found under ASan).
  for (std::size_t pos = html.find("<svg"); pos != std::string::npos;
       pos = html.find("<svg", pos)) {
    const std::size_t stop = html.find("</svg>", pos);
    REQUIRE(stop != std::string::npos);
    const std::string svg = html.substr(pos, stop + 6 - pos);
    pos = stop + 6;
    const std::size_t label = svg.find("aria-label=\"") + 12;
    const std::string title = svg.substr(label, svg.find('"', label) - label);
    if (!titles.empty() &&
        std::none_of(titles.begin(), titles.end(),
                     [&title](const std::string& t) { return title.starts_with(t); }))
      continue;
    CAPTURE(title);
    // The colors the chart's data marks are drawn with.
    std::set<std::uint32_t> data_colors;
    for (std::sregex_iterator f(svg.begin(), svg.end(), fill_re); f != end; ++f) {
      auto rgb = static_cast<std::uint32_t>(std::stoul((*f)[1].str(), nullptr, 16));
      // png_image RGBA in memory is bytes R,G,B,A: as a little-endian uint32 that is
      // A<<24|B<<16|G<<8|R.
      data_colors.insert(0xFF000000u | ((rgb & 0xFF) << 16) | (rgb & 0xFF00) | (rgb >> 16));
    }
    REQUIRE(!data_colors.empty());
    std::smatch wm;
    REQUIRE(std::regex_search(svg, wm, std::regex("width=\"(\\d+)\" height=\"(\\d+)\"")));
    const std::vector<std::uint32_t> px =
        render(dir, "chart" + std::to_string(n), "<!DOCTYPE html><html>", svg,
               std::stoi(wm[1].str()) + 40, std::stoi(wm[2].str()) + 40);
    std::map<std::uint32_t, std::size_t> hist;
    for (auto p : px) ++hist[p];
    CHECK(hist.size() >= 20u);  // text anti-aliasing, axes, grid and several fills
    for (auto c : data_colors) {
      CAPTURE(c);
      CHECK(hist[c] >= 20u);  // every data color is visibly drawn
    }
    ++n;
  }
  return n;
}

// Lines of text in a screenshot: runs of pixel rows holding dark (text) pixels.
std::size_t text_lines(const std::vector<std::uint32_t>& px, int width) {
  std::size_t lines = 0;
  bool in_line = false;
  for (std::size_t row = 0; row * static_cast<std::size_t>(width) < px.size(); ++row) {
    bool dark = false;
    for (int x = 0; x < width && !dark; ++x) {
      const std::uint32_t p =
          px[row * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)];
      dark = (p & 0xFF) < 100 && ((p >> 8) & 0xFF) < 100 && ((p >> 16) & 0xFF) < 100;
    }
    lines += dark && !in_line;
    in_line = dark;
  }
  return lines;
}
#endif

// The main job's report (scripts/main.sh, the README's "same pieces by hand"): 24 DGX-2 nodes,
// gpt-18b, 1/2/4/8 x 100 Gbps, 1K/2K tokens per GPU, the ZeRO++ paper's five DeepSpeed configs.
std::string main_job_html() {
  const std::string P = std::string(ZEROSIM_SOURCE_DIR) + "/workloads/deepspeed/zeropp-paper-";
  std::vector<report::ResultView> views;
  for (const Scenario& s :
       sweep::expand(Scenario{}, {{"--cluster", {"dgx2-v100"}},
                                  {"--nodes", {"24"}},
                                  {"--model", {"gpt-18b"}},
                                  {"--nics-per-node", {"1", "2", "4", "8"}},
                                  {"--nic-gbps", {"100"}},
                                  {"--tokens-per-gpu", {"1024", "2048"}},
                                  {"--deepspeed",
                                   {P + "zero3.json", P + "zero3-qwz.json", P + "zero3-hpz.json",
                                    P + "zero3-qgz.json", P + "zeropp.json"}}}))
    views.push_back(report::view_of(simulate(s)));
  return report::render_html(views, "sweep-dgx2-gpt18b.json");
}

std::string paper_like_html() {
  return report::render_html(report::read_results(testing::fake_paper_sweep(), "f.json"),
                             "fixture.json");
}

}  // namespace

TEST_CASE("every chart of the HTML report renders non-empty in headless Chromium") {
  require_chromium();
#ifdef ZEROSIM_HAVE_PNG
  const ScratchDir dir("report");
  CHECK(check_charts(paper_like_html(), dir.path) == 6u);
#endif
}

TEST_CASE("the main job's report renders; its top is docs/report-screenshot.png") {
  require_chromium();
#ifdef ZEROSIM_HAVE_PNG
  const ScratchDir dir("screenshot");
  const std::string html = main_job_html();
  CHECK(check_charts(html, dir.path) >= 4u);
  const fs::path page = dir.path / "report.html", png = dir.path / "report.png";
  std::ofstream(page) << html;
  const int width = 1400, height = 2400;  // the page width charts fit (at most 1360 px)
  REQUIRE(screenshot(page, png, width, height));
  int w = 0, h = 0;
  const std::vector<std::uint32_t> px = read_png(png.string(), w, h);
  REQUIRE(w == width);
  REQUIRE(h == height);
  CHECK(text_lines(px, width) >= 40u);
  const char* update = std::getenv("ZEROSIM_UPDATE_SCREENSHOT");
  if (update != nullptr && std::string(update) == "1") {
    const fs::path docs = fs::path(ZEROSIM_SOURCE_DIR) / "docs" / "report-screenshot.png";
    fs::copy_file(png, docs, fs::copy_options::overwrite_existing);
    MESSAGE("wrote " << docs.string());
  }
#endif
}

TEST_CASE("the scaling, tokens-per-GPU and time-to-train sections render in headless Chromium") {
  require_chromium();
#ifdef ZEROSIM_HAVE_PNG
  const ScratchDir dir("sections");
  const report::TrainingBudget budget{300e9, {2.5, {}}};  // one price for every GPU
  const std::vector<report::ResultView> nodes = testing::nodes_sweep();
  const std::string scaling = report::render_html(nodes, "nodes.json", budget);
  REQUIRE(scaling.find("<h2>Scaling with cluster size</h2>") != std::string::npos);
  CHECK(check_charts(scaling, dir.path, {"Throughput vs GPUs", "Scaling efficiency"}) == 2u);
  const std::string tokens = report::render_html(testing::tokens_sweep(), "tokens.json");
  REQUIRE(tokens.find("<h2>Throughput vs tokens per GPU</h2>") != std::string::npos);
  CHECK(check_charts(tokens, dir.path, {"Throughput vs tokens per GPU"}) == 1u);
  // The time-to-train table, in the report's styles: a line of text per scenario at least (the
  // heading, the note and the header add more).
  const std::size_t from = scaling.find("<h2>Time to train</h2>");
  REQUIRE(from != std::string::npos);
  const std::size_t to = scaling.find("</table>", from);
  REQUIRE(to != std::string::npos);
  const std::string head = scaling.substr(0, scaling.find("<body>"));
  const int width = 1400, height = 200 + 24 * static_cast<int>(nodes.size());  // a 1400 px page
  const std::vector<std::uint32_t> px =
      render(dir.path, "time-to-train", head, scaling.substr(from, to + 8 - from), width, height);
  CHECK(text_lines(px, width) >= nodes.size() + 3);
#endif
}
