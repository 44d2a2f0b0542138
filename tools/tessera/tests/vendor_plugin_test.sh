#!/usr/bin/env bash
# Vendor plugin test: what an outside accelerator vendor does on day one.
#   1. installs the build tree into a fresh prefix (the SDK a vendor receives);
#   2. builds samples/vendor-plugin (its own CMake project: find_package(Tessera)
#      and the installed headers only) against that prefix, warnings as errors;
#   3. loads it with the installed bin/tessera: `tessera devices` must list
#      acme:0 and reject none of its kernels;
#   4. runs the installed `tessera conformance` on it with the sample's own
#      expectations file: every family must pass (exit 0), and the report must
#      show the composites running through the core's decompositions - the
#      plugin implements the primitive set and nothing else.
#
# Usage: vendor_plugin_test.sh CMAKE BUILD_DIR SOURCE_DIR GENERATOR CXX
set -euo pipefail

cmake=$1 build=$2 source=$3 generator=$4 cxx=$5
unset TESSERA_PLUGIN_PATH TESSERA_CONFORMANCE_SUITE

work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-vendor-test.XXXXXX")
work=$(realpath "$work")
prefix=$work/prefix
cleanup() {
  local status=$?
  if ((status == 0)); then
    rm -rf "$work"
  else
    echo "vendor plugin test: FAILED (exit $status); files kept in $work" >&2
  fi
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() {
  echo "vendor plugin test: $*" >&2
  exit 1
}

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }

step "configure and build samples/vendor-plugin against $prefix (-Werror)"
"$cmake" -S "$source/samples/vendor-plugin" -B "$work/acme" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log" ||
  { cat "$work/configure.log"; fail "configuring the sample failed"; }
"$cmake" --build "$work/acme" -j "$(nproc 2>/dev/null || echo 2)"
plugin=$(find "$work/acme" -name 'libtessera-acme.so' -print -quit)
[[ -n $plugin ]] || fail "the sample built no libtessera-acme.so"

step "the plugin links no Tessera library"
if readelf -d "$plugin" | grep -E 'NEEDED' | grep -qi tessera; then
  fail "$plugin links a Tessera library: $(readelf -d "$plugin" | grep NEEDED)"
fi

step "tessera devices sees acme:0"
# Every plugin of the prefix plus the vendor's. The prefix also holds plugins
# for hardware this machine may lack (cuda, hip): the report lists them apart,
# as plugins without a device here, not as problems.
devices=$(env -u TESSERA_PLUGINS TESSERA_PLUGIN_PATH=$(dirname "$plugin") \
  "$prefix/bin/tessera" devices) ||
  fail "bin/tessera devices failed: $devices"
echo "$devices"
grep -qE '^  acme:0 ' <<<"$devices" || fail "tessera devices does not list acme:0"
grep -qE '^    device type acme, .*kernels: [0-9]+ bound, 0 rejected' <<<"$devices" ||
  fail "the load report rejects some of the sample's kernels"
grep -q '^Load report: no problems' <<<"$devices" || fail "the load report lists problems"

step "tessera conformance --plugin $plugin"
status=0
"$prefix/bin/tessera" conformance --plugin "$plugin" \
  --expectations "$source/samples/vendor-plugin/expectations" \
  --report "$work/report" --jobs 2 || status=$?
((status == 0)) || fail "tessera conformance exited $status (report in $work/report)"

step "the composites ran through decompositions"
md=$work/report/conformance.md
line=$(grep -E "^Ops run by a plugin kernel: [0-9]+; through the core's decompositions: [0-9]+" "$md") ||
  fail "the report has no kernel/decomposition line"
kernels=$(sed -E 's/^Ops run by a plugin kernel: ([0-9]+);.*/\1/' <<<"$line")
decomposed=$(sed -E "s/.*through the core's decompositions: ([0-9]+).*/\\1/" <<<"$line")
echo "ops by kernel: $kernels; by decomposition: $decomposed"
# The primitive set is 20 ops; routed ops (exp, sum, ...) count as kernel ops.
# The golden file covers about 200 ops; about 75 of them are composites.
((decomposed >= 60)) || fail "only $decomposed ops ran through decompositions; expected >= 60"
for family in abi device memory streams copies ops autograd random concurrency lifecycle collectives; do
  row=$(grep -E "^\| $family \| [0-9]+ \| 0 \| 0 \|" "$md") ||
    fail "family $family is missing from the report or has failures"
  passed=$(awk -F'|' '{gsub(/ /, "", $3); print $3}' <<<"$row")
  ((passed > 0)) || fail "family $family passed no case"
done
grep -E '^\| (ops|autograd|collectives) \|' "$md"
echo "vendor plugin test: OK"
