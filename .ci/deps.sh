#!/usr/bin/env bash
# Installs the Debian packages strata's build and tests need, when they are missing.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang clang-tidy pkg-config googletest libgtest-dev libgmock-dev
      libbenchmark-dev liblz4-dev liblmdb-dev libsqlite3-dev libclang-rt-14-dev
      libxxhash-dev librocksdb-dev libwiredtiger-dev gnuplot-nox libcli11-dev nlohmann-json3-dev doxygen)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
