#!/usr/bin/env bash
# Install test: installs the build tree into a fresh prefix, builds the
# out-of-tree application samples/consumer against it with
# find_package(Tessera) and runs it with TESSERA_PLUGIN_PATH unset, so the
# installed libtessera must find the installed CPU plugin next to itself. Also
# checks that nothing installed points back into the build or source tree
# (CMake package files, RUNPATHs) and that the installed bin/tessera works and
# loads the installed plugin.
#
# Usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR GENERATOR CXX [consumer cmake args...]
set -euo pipefail

cmake=$1 build=$2 source=$3 generator=$4 cxx=$5
shift 5
unset TESSERA_PLUGIN_PATH

work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-install-test.XXXXXX")
work=$(realpath "$work")
prefix=$work/prefix
cleanup() {
  local status=$?
  if ((status == 0)); then
    rm -rf "$work"
  else
    echo "install test: FAILED (exit $status); files kept in $work" >&2
  fi
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() {
  echo "install test: $*" >&2
  exit 1
}

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }

config=$(find "$prefix" -name TesseraConfig.cmake -print -quit)
[[ -n $config ]] || fail "no TesseraConfig.cmake installed under $prefix"
[[ -x $prefix/bin/tessera ]] || fail "bin/tessera was not installed"
plugin=$(find "$prefix" -path '*/tessera/libtessera-cpu.so' -print -quit)
[[ -n $plugin ]] || fail "no CPU plugin installed (expected <libdir>/tessera/libtessera-cpu.so)"
library=$(find "$prefix" -name 'libtessera.so*' -print -quit)
[[ -n $library ]] || fail "libtessera.so was not installed"
[[ $(dirname "$plugin") == "$(dirname "$library")/tessera" ]] ||
  fail "plugin $plugin is not in <dir of libtessera>/tessera"

step "the installed package does not refer to the build or source tree"
if grep -rlF -e "$build" -e "$source" "$(dirname "$config")"; then
  fail "the files above refer to $build or $source"
fi
while IFS= read -r -d '' file; do
  if readelf -d "$file" 2>/dev/null | grep -E 'RPATH|RUNPATH' | grep -qF -e "$build" -e "$source"; then
    fail "$file has a RUNPATH into the build or source tree: $(readelf -d "$file" | grep -E 'RPATH|RUNPATH')"
  fi
done < <(find "$prefix" -type f \( -name '*.so*' -o -path '*/bin/*' \) -print0)

step "configure and build samples/consumer against $prefix"
"$cmake" -S "$source/samples/consumer" -B "$work/consumer" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "$@"
"$cmake" --build "$work/consumer"

step "run the consumer (TESSERA_PLUGIN_PATH unset)"
output=$("$work/consumer/tessera_consumer") || fail "the consumer failed: $output"
echo "$output"
grep -qx 'sum: 11 22 33 44' <<<"$output" || fail "expected 'sum: 11 22 33 44'"

step "run the installed bin/tessera devices"
devices=$("$prefix/bin/tessera" devices) || fail "bin/tessera devices failed: $devices"
echo "$devices"
grep -qE '^  cpu:0 ' <<<"$devices" || fail "bin/tessera devices does not list cpu:0"
grep -qF "$plugin" <<<"$devices" || fail "bin/tessera did not load the installed plugin $plugin"
echo "install test: OK"
