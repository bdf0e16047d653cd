#!/usr/bin/env bash
# Installs the Debian packages meshplan needs, only those missing. Works as root or with sudo.
#   scripts/install-deps.sh          what `make demo` and `make test` need
#   scripts/install-deps.sh fuzz     also clang 14 and its sanitizer/libFuzzer runtimes (`make fuzz`)
set -euo pipefail
packages=(cmake g++ make libyaml-cpp-dev libfmt-dev libcli11-dev libeigen3-dev doctest-dev
          nlohmann-json3-dev librsvg2-bin libxml2-utils clang-format libopenmpi-dev openmpi-bin)
[[ ${1:-} == fuzz ]] && packages+=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "meshplan: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
