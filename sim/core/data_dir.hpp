// data_dir: the folder the shipped data is read from at run time (topologies/, workloads/ and
// calibrate/profiles/: the presets that --cluster, --model and --profile name). The one place that
// decides it; it is looked up once per process, in this order:
//   1. $ZEROSIM_DATA_DIR, when set and not empty: an explicit choice wins. It must be a folder
//      holding topologies/, workloads/ and calibrate/profiles/; anything else is an InputError
//      naming the variable (the CLI exits 2), never a silent fallback.
//   2. <folder of the running executable>/../share/zerosim, when it exists: an installed zerosim
//      (bin/zerosim beside share/zerosim, `cmake --install`), wherever the prefix was moved; for
//      the installed Python module (lib/python3/dist-packages/zerosim*.so), share/zerosim of its
//      prefix, found from the module's own file.
//   3. The source tree the library was built from (compiled in as ZEROSIM_SOURCE_DATA_DIR), for
//      runs from the build tree, when it exists.
// None found: an InputError listing what was tried. A program of its own that links the installed
// library (find_package(zerosim)) is not beside share/zerosim: it sets ZEROSIM_DATA_DIR.
#pragma once
#include <string>

namespace zerosim {

// The data folder (no trailing slash). Throws InputError as described above; thread-safe.
const std::string& data_dir();

}  // namespace zerosim
