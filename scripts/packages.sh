# Debian 12 packages gpstream needs, and their installer; sourced by scripts/setup and scripts/test.
#   RUNTIME_PACKAGES  build and run the gpstream binary (scripts/setup, the main job)
#   TEST_PACKAGES     build and run the tests, benchmarks and fuzz replays (scripts/test)
RUNTIME_PACKAGES=(g++ cmake make pkg-config libopenblas-openmp-dev nlohmann-json3-dev libpcre2-dev libutf8proc-dev
                  libcli11-dev libboost-dev libsndfile1-dev)
# espeak-ng: synthetic speech (scripts/make-speech-data, speech tests); sox, libsox-fmt-mp3: audio fixtures;
# librsvg2-bin: plot render tests; tmux: the live-view terminal tests; qemu-user: the binary's instruction-set
# check on an emulated older CPU; curl: the installed server test; clang, libclang-rt-14-dev: the libFuzzer
# build (scripts/fuzz); clang-format: the format check of every tracked C++ file.
TEST_PACKAGES=(libgtest-dev libbenchmark-dev clang libclang-rt-14-dev clang-format jq espeak-ng sox libsox-fmt-mp3
               librsvg2-bin tmux qemu-user curl)

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
