#!/usr/bin/env bash
# Installs what gtrace needs from Debian, only what is missing.
# Uses sudo when not root.  Safe to run again.
set -euo pipefail
pkgs=(build-essential pkg-config meson ninja-build libncurses-dev libcjson-dev
      libzstd-dev zlib1g-dev libsqlite3-dev libcriterion-dev tmux clang
      libclang-rt-14-dev python3 python3-pandas
      libprotobuf-c-dev protobuf-c-compiler python3-protobuf protobuf-compiler
      openssh-server openssh-client)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "gtrace: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
