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
