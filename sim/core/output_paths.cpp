#include "sim/core/output_paths.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"

namespace zerosim {

namespace fs = std::filesystem;

namespace {

struct Identity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string resolved;  // for a file that does not exist yet
  bool operator==(const Identity& o) const {
    return exists == o.exists && (exists ? dev == o.dev && ino == o.ino : resolved == o.resolved);
  }
};

Identity identity_of(const std::string& path) {
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  id.resolved = ec ? path : p.string();
  return id;
}

bool skipped(const FlagPath& p) { return p.path.empty() || p.path == "-"; }

void check_writable(const FlagPath& out) {
  const fs::path p(out.path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(p, ec))
    throw InputError(out.path, out.flag, "output path is a folder, not a file");
  if (const std::string rule = non_regular_output_rule(out.path); !rule.empty())
    throw InputError(out.path, out.flag, rule);
  if (!fs::is_directory(dir, ec))
    throw InputError(out.path, out.flag, "output folder does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw InputError(out.path, out.flag, "output folder is not writable");
}

}  // namespace

std::string non_regular_output_rule(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  const char* kind = S_ISDIR(st.st_mode)    ? "folder"
                     : S_ISCHR(st.st_mode)  ? "character device"
                     : S_ISBLK(st.st_mode)  ? "block device"
                     : S_ISFIFO(st.st_mode) ? "FIFO"
                     : S_ISSOCK(st.st_mode) ? "socket"
                                            : "special file";
  return fmt::format(
      "output path is a {}, not a regular file: an output is written only to a regular file or a "
      "new path ('-' for standard output where the flag says so), never over such a node",
      kind);
}

FlagPath data_input(const std::string& flag, const std::string& dir, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name.ends_with(".json"))
    return {flag, name};
  return {flag, (fs::path(data_dir()) / dir / (name + ".json")).string()};
}

void check_output_paths(const std::vector<FlagPath>& inputs, const std::vector<FlagPath>& outputs) {
  std::vector<std::pair<const FlagPath*, Identity>> in_ids, out_ids;
  for (const auto& in : inputs) {
    if (skipped(in)) continue;
    Identity id = identity_of(in.path);
    if (id.exists) in_ids.emplace_back(&in, id);
  }
  for (const auto& out : outputs) {
    if (skipped(out)) continue;
    check_writable(out);
    const Identity id = identity_of(out.path);
    for (const auto& [in, in_id] : in_ids)
      if (in_id == id)
        throw flag_error(out.flag, fmt::format("'{}' is the same file as {} '{}': an output must "
                                               "not replace an input of the same command",
                                               out.path, in->flag, in->path));
    for (const auto& [other, other_id] : out_ids)
      if (other_id == id)
        throw flag_error(
            out.flag, fmt::format("'{}' is the same file as {} '{}': give each output its own file",
                                  out.path, other->flag, other->path));
    out_ids.emplace_back(&out, id);
  }
}

}  // namespace zerosim
