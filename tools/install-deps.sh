#!/usr/bin/env sh
# Installs what building and testing libapairs needs and this machine lacks, and says
# what it installs. On Debian and Ubuntu it uses apt-get (as root, or through sudo when
# that needs no password); elsewhere it lists what to install by hand and fails.
#
#   tools/install-deps.sh               build, tests (meson, ninja, a C/C++ compiler,
#                                       fmt, Catch2, Python 3, nm; gfortran if it can;
#                                       PLINK 1.9, the oracle of the genotype tests)
#   tools/install-deps.sh --sanitizers  also clang and its sanitizer and libFuzzer
#                                       runtimes (the sanitizer builds of .ci/run)
#
# The CUDA backend needs nvcc on PATH (the CUDA toolkit); this script does not install it.
set -eu

sanitizers=no
for arg in "$@"; do
  case "$arg" in
    --sanitizers) sanitizers=yes ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

missing=""   # Debian package names
need() {     # need PACKAGE CHECK...: PACKAGE is missing when the check fails
  pkg=$1; shift
  if ! "$@" >/dev/null 2>&1; then missing="$missing $pkg"; fi
}
have_cmd() { command -v "$1"; }
have_pc() { pkg-config --exists "$1"; }
have_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

need meson have_cmd meson
need ninja-build have_cmd ninja
need pkg-config have_cmd pkg-config
need g++ have_cmd c++
need binutils have_cmd nm
need python3 have_cmd python3
if have_cmd dpkg-query >/dev/null 2>&1; then
  need libfmt-dev have_deb libfmt-dev
  need catch2 have_deb catch2
  need gfortran have_cmd gfortran
  need plink1.9 have_cmd plink1.9
else
  need 'fmt (headers, pkg-config file)' have_pc fmt
  need 'Catch2 (2.13 or 3.x)' have_pc catch2
fi
if [ "$sanitizers" = yes ]; then
  need clang have_cmd clang++
  if have_cmd dpkg-query >/dev/null 2>&1; then need libclang-rt-dev have_deb libclang-rt-dev; fi
fi

if [ -z "$missing" ]; then
  echo "install-deps: everything needed is here"
  exit 0
fi

if have_cmd apt-get >/dev/null 2>&1 && have_cmd dpkg-query >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then sudo=""
  elif have_cmd sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"
  else
    echo "install-deps: missing:$missing" >&2
    echo "install-deps: run as root: apt-get install$missing" >&2
    exit 1
  fi
  echo "install-deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
  echo "install-deps: installed:$missing"
  exit 0
fi

echo "install-deps: missing:$missing" >&2
echo "install-deps: this is not a Debian-like system; install those with your package manager" >&2
echo "install-deps: (meson >= 1.0, ninja, a C++17 compiler, fmt >= 8, Catch2 >= 2.13, Python 3, binutils)" >&2
exit 1
