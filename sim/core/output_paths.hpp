// Outputs never destroy inputs: every command checks its output paths before any work. An output
// must be in an existing, writable folder and be a new path or an existing regular file (never a
// folder, a device, a FIFO or a socket: writing replaces the file, which would destroy such a
// node, e.g. /dev/null as root; "-" is standard output), and it must not be the same
// file as an input or as another output of the same command: the same inode for files that exist
// (so links and ./x spellings are seen through), the same resolved path for those that do not yet.
#pragma once
#include <string>
#include <vector>

namespace zerosim {

// A path given with a flag ("--out", "--model", or a positional name like "MEAS").
struct FlagPath {
  std::string flag, path;
};

// An input given as a preset name or a file (--cluster, --model, --profile): the preset's file in
// the data folder `dir` ("topologies", "workloads", "calibrate/profiles") when `name` is a bare
// name.
FlagPath data_input(const std::string& flag, const std::string& dir, const std::string& name);

// The rule an existing `path` breaks when it is not a regular file ("output path is a FIFO: ..."),
// following symbolic links; "" for a regular file or a path that does not exist.
std::string non_regular_output_rule(const std::string& path);

// Throws InputError naming the output's flag and, for a clash, the other flag and both paths.
// Empty paths and "-" (stdout) are skipped; inputs that do not exist as files (presets, typos for
// the loader to report) cannot clash.
void check_output_paths(const std::vector<FlagPath>& inputs, const std::vector<FlagPath>& outputs);

}  // namespace zerosim
