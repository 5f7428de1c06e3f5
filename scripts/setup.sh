#!/usr/bin/env bash
# Installs the Debian packages zerosim needs (skips the install when all are present).
set -euo pipefail
pkgs=(cmake g++ make libboost-graph-dev nlohmann-json3-dev libfmt-dev libcli11-dev doctest-dev
      libyaml-cpp-dev
      libbenchmark-dev libpng-dev openmpi-bin libopenmpi-dev clang libclang-rt-14-dev chromium
      pybind11-dev python3-dev python3-venv python3-jsonschema python3-pandas clang-format clang-tidy)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
