// data_dir: $ZEROSIM_DATA_DIR, else share/zerosim beside the installed executable, else the source
// tree (see data_dir.hpp).
#include "sim/core/data_dir.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "sim/core/error.hpp"

// Both come from sim/CMakeLists.txt: the source tree, and share/zerosim seen from bin/.
#if !defined(ZEROSIM_SOURCE_DATA_DIR) || !defined(ZEROSIM_INSTALL_DATA_FROM_BIN) || \
    !defined(ZEROSIM_INSTALL_DATA_FROM_PYTHON)
#error "ZEROSIM_SOURCE_DATA_DIR and ZEROSIM_INSTALL_DATA_FROM_BIN/PYTHON must be defined"
#endif

namespace zerosim {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEnv = "ZEROSIM_DATA_DIR";
constexpr const char* kFolders[] = {"topologies", "workloads", "calibrate/profiles"};

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string strip_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string find_data_dir() {
  if (const char* env = std::getenv(kEnv); env != nullptr && *env != '\0') {
    const fs::path dir(env);
    if (!is_dir(dir))
      throw InputError("<environment>", kEnv,
                       fmt::format("'{}' is not a folder (it must name zerosim's data folder, "
                                   "holding topologies/, workloads/ and calibrate/profiles/; "
                                   "unset it to use the installed or built-in one)",
                                   env));
    for (const char* sub : kFolders)
      if (!is_dir(dir / sub))
        throw InputError("<environment>", kEnv,
                         fmt::format("'{}' has no folder {}/ (it must name zerosim's data "
                                     "folder, holding topologies/, workloads/ and "
                                     "calibrate/profiles/; unset it to use the installed or "
                                     "built-in one)",
                                     env, sub));
    return strip_slashes(env);
  }
  std::vector<std::string> tried = {fmt::format("${} (not set)", kEnv)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed =
        (exe.parent_path() / ZEROSIM_INSTALL_DATA_FROM_BIN).lexically_normal();
    if (is_dir(installed)) return strip_slashes(installed.string());
    tried.push_back(installed.string());
  }
  // The Python module: the running executable is python3, the data sits beside the installed
  // module (the shared object holding this code).
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&find_data_dir), &self) != 0 && self.dli_fname &&
      fs::path(self.dli_fname).extension() == ".so") {
    const fs::path installed =
        (fs::absolute(self.dli_fname, ec).parent_path() / ZEROSIM_INSTALL_DATA_FROM_PYTHON)
            .lexically_normal();
    if (is_dir(installed)) return strip_slashes(installed.string());
    tried.push_back(installed.string());
  }
  const fs::path source(ZEROSIM_SOURCE_DATA_DIR);
  if (is_dir(source / "topologies")) return strip_slashes(source.string());
  tried.push_back(source.string());
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw InputError("<environment>", kEnv,
                   fmt::format("no zerosim data folder found (tried {}); set {} to the folder "
                               "holding topologies/, workloads/ and calibrate/profiles/",
                               list, kEnv));
}

}  // namespace

const std::string& data_dir() {
  // A throwing initializer leaves it uninitialized: the next call looks again (and throws again).
  static const std::string dir = find_data_dir();
  return dir;
}

}  // namespace zerosim
