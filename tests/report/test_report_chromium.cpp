// The HTML report renders in headless Chromium with every chart non-empty: each chart is
// screenshotted on its own page and the PNG must show the chart's data colors (exact fills of its
// bars/markers) over a non-trivial number of pixels, plus many distinct colors overall. Skipped,
// visibly, without Chromium or libpng.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "../sweep/fake_results.hpp"
#include "sim/report/html.hpp"
#include "sim/report/result_view.hpp"
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

std::string paper_like_html() {
  return report::render_html(report::read_results(testing::fake_paper_sweep(), "f.json"),
                             "fixture.json");
}

}  // namespace

TEST_CASE("every chart of the HTML report renders non-empty in headless Chromium") {
  if (::access(kChromium, X_OK) != 0)
    zerosim::testing::skip_executable(std::string(kChromium) +
                                      " not found (install Debian's chromium)");
#ifndef ZEROSIM_HAVE_PNG
  zerosim::testing::skip_executable(
      "built without libpng (install libpng-dev), cannot decode screenshots");
#else
  fs::path dir = fs::temp_directory_path() / ("zerosim_chromium_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string html = paper_like_html();
  std::regex fill_re("class=\"data\"[^>]*?(?:fill|stroke)=\"#([0-9A-Fa-f]{6})\"");
  const std::sregex_iterator end;
  std::size_t n = 0;
  // Each <svg>...</svg> chart by string search: libstdc++'s regex recurses once per character
  // of a lazy match, which overflows the stack on a whole chart (found under ASan).
  for (std::size_t pos = html.find("<svg"); pos != std::string::npos;
       pos = html.find("<svg", pos), ++n) {
    const std::size_t stop = html.find("</svg>", pos);
    REQUIRE(stop != std::string::npos);
    std::string svg = html.substr(pos, stop + 6 - pos);
    pos = stop + 6;
    CAPTURE(n);
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
    int w = std::stoi(wm[1].str()) + 40, h = std::stoi(wm[2].str()) + 40;
    fs::path page = dir / ("chart" + std::to_string(n) + ".html");
    std::ofstream(page) << "<!DOCTYPE html><html><body style=\"margin:8px\">" << svg
                        << "</body></html>";
    fs::path png = dir / ("chart" + std::to_string(n) + ".png");
    REQUIRE(screenshot(page, png, w, h));
    int pw = 0, ph = 0;
    auto px = read_png(png.string(), pw, ph);
    REQUIRE(!px.empty());
    CHECK(pw == w);
    std::map<std::uint32_t, std::size_t> hist;
    for (auto p : px) ++hist[p];
    CHECK(hist.size() >= 20u);  // text anti-aliasing, axes, grid and several fills
    for (auto c : data_colors) {
      CAPTURE(c);
      CHECK(hist[c] >= 20u);  // every data color is visibly drawn
    }
  }
  CHECK(n == 6u);
  fs::remove_all(dir);
#endif
}
