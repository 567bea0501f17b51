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

# Build dependencies of the whole project (one list, used by both commands).
# zlib1g-dev: .gz key files (`--dataset file:X.gz`); wamerican-insane: `--dataset words`.
PMINDEX_PACKAGES=(cmake ninja-build g++ libgtest-dev libabsl-dev git zlib1g-dev wamerican-insane)

# The Python side (the `pmindex` package's tests, `pmindex report`): python3
# with its headers, and nanobind, matplotlib and pytest from PyPI.
pmindex_need_python() {
  command -v python3 >/dev/null 2>&1 || pmindex_need_packages python3 python3-dev python3-pip
  python3 -c 'import os, sysconfig; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' \
    2>/dev/null || pmindex_need_packages python3-dev
  python3 -c 'import nanobind, matplotlib, pytest' 2>/dev/null && return 0
  python3 -m pip --version >/dev/null 2>&1 || pmindex_need_packages python3-pip
  echo "installing (pip): nanobind matplotlib pytest" >&2
  python3 -m pip install -q nanobind matplotlib pytest >&2 ||
    python3 -m pip install -q --break-system-packages nanobind matplotlib pytest >&2  # Debian's own python3
}
