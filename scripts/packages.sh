# Debian 12 packages gpstream needs, and their installer; sourced by scripts/setup and scripts/test.
#   RUNTIME_PACKAGES  build and run the gpstream binary (scripts/setup, the main job)
#   TEST_PACKAGES     build and run the tests, benchmarks and fuzz replays (scripts/test)
RUNTIME_PACKAGES=(g++ cmake make pkg-config libopenblas-openmp-dev nlohmann-json3-dev libpcre2-dev libutf8proc-dev
                  libcli11-dev libboost-dev libsndfile1-dev)
# espeak-ng: synthetic speech (scripts/make-speech-data, speech tests); sox, libsox-fmt-mp3: audio fixtures;
# librsvg2-bin: plot render tests; tmux: the live-view terminal tests; qemu-user: the binary's instruction-set
# check on an emulated older CPU; curl: the installed server test; clang, libclang-rt-14-dev: the libFuzzer
# build (scripts/fuzz); clang-format: the format check of every tracked C++ file; openssl: the deployment
# test's throwaway certificate (its nginx is fetched by fetch_nginx below, not installed); pybind11-dev,
# python3-dev, python3-numpy, python3-pytest, python3-torch: the Python package, the PyTorch recipe and their tests
# (docs/python.md, docs/training.md).
TEST_PACKAGES=(libgtest-dev libbenchmark-dev clang libclang-rt-14-dev clang-format jq espeak-ng sox libsox-fmt-mp3
               librsvg2-bin tmux qemu-user curl openssl pybind11-dev python3-dev python3-numpy python3-pytest
               python3-torch)

# install_packages NAME...: apt-get installs those not installed yet (as root, or through sudo).
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
}

# fetch_nginx DIR: Debian's nginx package unpacked into DIR — not installed, which would start a system nginx
# on port 80 — for the two-replica deployment test; prints the binary's path, or nothing (with a note) when the
# package cannot be downloaded, and the test then skips.
fetch_nginx() {
  local dir=$1 bin=$1/usr/sbin/nginx
  if [ ! -x "$bin" ]; then
    local tmp
    tmp=$(mktemp -d)
    if ! (cd "$tmp" && apt-get download -q nginx >/dev/null 2>&1); then
      local sudo=""
      [ "$(id -u)" = 0 ] || sudo="sudo"
      $sudo apt-get update -q >/dev/null 2>&1 || true
      (cd "$tmp" && apt-get download -q nginx >/dev/null 2>&1) || true
    fi
    if ls "$tmp"/nginx_*.deb >/dev/null 2>&1; then
      mkdir -p "$dir" && dpkg-deb -x "$tmp"/nginx_*.deb "$dir"
    else
      echo "note: could not download Debian's nginx (apt-get download nginx): the deployment test will skip" >&2
    fi
    rm -rf "$tmp"
  fi
  if [ -x "$bin" ]; then echo "$bin"; fi
}
