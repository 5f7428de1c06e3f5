"""The PEP 517 build backend of `pip install .`: CMake builds the Python module and the CLI, and
the wheel carries them with the shipped data. Standard library only, so that
`pip install --no-build-isolation .` works offline in a fresh venv, which has neither setuptools'
bdist_wheel (the `wheel` package) nor scikit-build; the build itself needs Debian's cmake, g++,
pybind11-dev and python3-dev (scripts/setup.sh).

The wheel (one per CPython version and platform, e.g. cp311-cp311-linux_x86_64):
  zerosim.cpython-*.so                   the module, at the top of site-packages
  zerosim-V.data/data/share/zerosim/     topologies/, workloads/, calibrate/profiles/: installed
                                         to <prefix>/share/zerosim
  zerosim-V.data/scripts/zerosim         the CLI: installed to <prefix>/bin
site-packages is lib/pythonX.Y/site-packages under the prefix of a venv, `pip install --user`
(~/.local), /usr/local or conda, so the module finds <prefix>/share/zerosim from its own file and
the CLI from bin/, as an installed tree of `cmake --install` does (sim/core/data_dir.hpp). What the
data and the module are is decided by the install rules (cmake/ZerosimInstall.cmake, components
`data`, `python` and `cli`); this backend stages those components and packs them.

The CMake build directory:
  ZEROSIM_BUILD_DIR=DIR  an existing build of this source tree (CI's build/, after scripts/test.sh):
                         only what is out of date is rebuilt (`cmake --build DIR --target
                         zerosim_python zerosim`), then staged. Its Python module must be built
                         for the interpreter running pip (the same extension suffix).
  unset                  build-python/ in the source tree, configured for the interpreter running
                         pip (Release, ZEROSIM_PYTHON=ON, no benchmarks, no CUDA) and reused by
                         the next `pip install .`. Parallel jobs: CMAKE_BUILD_PARALLEL_LEVEL, else
                         every core.
"""
import base64
import hashlib
import importlib.machinery
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

SRC = pathlib.Path.cwd().resolve()  # pip runs the hooks in the source tree
NAME = "zerosim"
SUMMARY = "ZeRO-3 / ZeRO++ / FSDP training-step simulator and planner"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed: the same build gives the same wheel


class BuildError(RuntimeError):
    pass


def _version():
    text = (SRC / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*zerosim\s+VERSION\s+([0-9.]+)", text)
    if not m:
        raise BuildError("CMakeLists.txt: no `project(zerosim VERSION X.Y.Z ...)` to take the version from")
    return m.group(1)


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
    return f"{impl}-{impl}{sys.abiflags}-{plat}"


def _run(cmd):
    print("zerosim build:", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True)


def _cmake():
    cmake = shutil.which("cmake")
    if not cmake:
        raise BuildError("cmake is not on PATH (Debian: apt-get install cmake; scripts/setup.sh installs "
                         "everything the build needs)")
    return cmake


def _cache(build):
    """The CMake cache of `build` as {name: value}."""
    values = {}
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.+-]+):[A-Z]+=(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


def _build_dir(cmake):
    """The configured build directory: ZEROSIM_BUILD_DIR's, or build-python/ (configured here)."""
    given = os.environ.get("ZEROSIM_BUILD_DIR", "")
    if given:
        build = pathlib.Path(given).resolve()
        if not (build / "CMakeCache.txt").is_file():
            raise BuildError(f"ZEROSIM_BUILD_DIR={given}: not a configured CMake build directory "
                             "(no CMakeCache.txt); unset it to build one in build-python/")
        home = _cache(build).get("CMAKE_HOME_DIRECTORY", "")
        if pathlib.Path(home).resolve() != SRC:
            raise BuildError(f"ZEROSIM_BUILD_DIR={given}: built from {home}, not from this source tree "
                             f"{SRC}")
        return build
    build = SRC / "build-python"
    if not (build / "CMakeCache.txt").is_file():
        _run([cmake, "-S", SRC, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DZEROSIM_PYTHON=ON",
              "-DZEROSIM_BENCHMARKS=OFF", "-DZEROSIM_CUDA=OFF", f"-DPython3_EXECUTABLE={sys.executable}"])
    return build


def _check_layout(cache):
    """The module finds the data at the path compiled into it (sim/CMakeLists.txt): it must be
    where the wheel puts it, seen from site-packages."""
    pydir = cache.get("ZEROSIM_PYTHON_INSTALL_DIR", "")
    datadir = cache.get("ZEROSIM_INSTALL_DATA_DIR", "")
    site = sysconfig.get_path("platlib", vars={"base": "/P", "platbase": "/P"})
    want = os.path.relpath("/P/share/zerosim", site)
    have = os.path.relpath("/P/" + datadir, "/P/" + pydir)
    if have != want:
        raise BuildError(f"the build's module looks for its data at {have} from its folder "
                         f"(ZEROSIM_PYTHON_INSTALL_DIR={pydir}, data {datadir}); a wheel installs it "
                         f"at {want} from site-packages ({site})")


def _stage(staging):
    """Builds what is out of date and installs the wheel's components under `staging`; returns the
    module's path."""
    cmake = _cmake()
    build = _build_dir(cmake)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run([cmake, "--build", build, "-j", jobs, "--target", "zerosim_python", "zerosim"])
    cache = _cache(build)
    _check_layout(cache)
    for component in ("python", "data", "cli"):
        _run([cmake, "--install", build, "--prefix", staging, "--component", component])
    modules = sorted((staging / cache["ZEROSIM_PYTHON_INSTALL_DIR"]).glob(NAME + ".*"))
    if len(modules) != 1:
        raise BuildError(f"{build}: expected one Python module {NAME}.* after the build, found "
                         f"{[m.name for m in modules]} (is pybind11-dev installed? see ZEROSIM_PYTHON)")
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    if not any(modules[0].name == NAME + s for s in suffixes):
        raise BuildError(f"{modules[0].name} is not built for this interpreter ({sys.executable}, "
                         f"extension suffixes {suffixes}); "
                         + ("build with ZEROSIM_BUILD_DIR unset, or point it at a build configured with "
                            f"-DPython3_EXECUTABLE={sys.executable}" if os.environ.get("ZEROSIM_BUILD_DIR")
                            else "remove build-python/ and run pip again"))
    return modules[0]


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\nLicense: see the source tree\n"
            "Provides-Extra: pandas\nRequires-Dist: pandas; extra == \"pandas\"\n")


def _wheel_text():
    return f"Wheel-Version: 1.0\nGenerator: zerosim_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _dist_info(version):
    return f"{NAME}-{version}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    d = pathlib.Path(metadata_directory) / _dist_info(version)
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata(version))
    (d / "WHEEL").write_text(_wheel_text())
    return d.name


class _Wheel:
    """A wheel written entry by entry, in order, with its RECORD."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, executable=False):
        info = zipfile.ZipInfo(arcname, ZIP_TIME)
        info.external_attr = (0o100755 if executable else 0o100644) << 16  # regular file, mode
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, record_name):
        self.record.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, ZIP_TIME)
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n", zipfile.ZIP_DEFLATED)
        self.zip.close()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    name = f"{NAME}-{version}-{_tag()}.whl"
    with tempfile.TemporaryDirectory(prefix="zerosim-wheel-") as tmp:
        staging = pathlib.Path(tmp)
        module = _stage(staging)
        wheel = _Wheel(pathlib.Path(wheel_directory) / name)
        wheel.add(module.name, module.read_bytes())
        data = f"{NAME}-{version}.data"
        share = staging / "share"
        for f in sorted(p for p in share.rglob("*") if p.is_file()):
            wheel.add(f"{data}/data/share/{f.relative_to(share).as_posix()}", f.read_bytes())
        for f in sorted(p for p in (staging / "bin").iterdir() if p.is_file()):
            wheel.add(f"{data}/scripts/{f.name}", f.read_bytes(), executable=True)
        info = _dist_info(version)
        wheel.add(f"{info}/METADATA", _metadata(version).encode())
        wheel.add(f"{info}/WHEEL", _wheel_text().encode())
        wheel.add(f"{info}/top_level.txt", f"{NAME}\n".encode())
        wheel.close(f"{info}/RECORD")
    print(f"zerosim build: wrote {name}", flush=True)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, as NAME-VERSION.tar.gz."""
    version = _version()
    base = f"{NAME}-{version}"
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=SRC, check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise BuildError(f"an sdist lists the files git tracks, and `git ls-files` failed: {e}") from e
    name = base + ".tar.gz"
    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz") as tar:
        for rel in sorted(f for f in files.decode().split("\0") if f):
            tar.add(SRC / rel, arcname=f"{base}/{rel}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        meta = _metadata(version).encode()
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
    return name
