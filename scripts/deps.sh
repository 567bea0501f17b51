# Sourced by scripts/bench and scripts/test: installs the Debian packages the
# build needs when they are missing (root on a fresh Debian machine).
pmindex_need_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
}

# Python packages (pip) when `python3 -c 'import X'` fails for one of them.
pmindex_need_pip() {
  local missing=()
  for pkg in "$@"; do
    python3 -c "import $pkg" 2>/dev/null || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "pip installing: ${missing[*]}" >&2
  python3 -m pip install -q "${missing[@]}" >&2 ||
    python3 -m pip install -q --break-system-packages "${missing[@]}" >&2
}

# Build dependencies of the whole project (one list, used by both commands).
# zlib1g-dev: .gz key files (`--dataset file:X.gz`); wamerican-insane: `--dataset words`;
# libevent-dev + pkg-config: `pmindex serve` (docs/server.md); libtomlplusplus-dev: `pmindex study` (docs/studies.md);
# libtbb-dev: the tbb-map baseline.
PMINDEX_PACKAGES=(cmake ninja-build g++ libgtest-dev libabsl-dev libtbb-dev git zlib1g-dev wamerican-insane libevent-dev pkg-config libtomlplusplus-dev nlohmann-json3-dev libcli11-dev)
# What the server tests drive it with (scripts/test): real memcached clients
# and the twemproxy sharding proxy (Debian), pytest, pymemcache and
# meta-memcache (pip; import names: pip takes meta_memcache for meta-memcache).
PMINDEX_TEST_PACKAGES=(libmemcached-tools nutcracker python3 python3-pip)
PMINDEX_TEST_PIP=(pytest pymemcache meta_memcache)

# The Python side (the `pmindex` package's tests, `pmindex report`): python3
# with its headers, and nanobind, matplotlib and pytest from PyPI.
pmindex_need_python() {
  command -v python3 >/dev/null 2>&1 || pmindex_need_packages python3 python3-dev python3-pip
  python3 -c 'import os, sysconfig; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' \
    2>/dev/null || pmindex_need_packages python3-dev
  python3 -m pip --version >/dev/null 2>&1 || pmindex_need_packages python3-pip
  pmindex_need_pip nanobind matplotlib pytest
}
