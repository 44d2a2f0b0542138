#!/usr/bin/env bash
# Install test: README.md's install commands, exactly as the README gives them
# (the fenced block under "## Install"), on this build tree, into a fresh
# prefix. The block starts with scripts/run-main, which this tree stands in
# for: the test runs after (at least) its targets are built, and the device
# plugins run-main does not build (CUDA, HIP), configured here whenever nvcc
# and hipcc are found, may be unbuilt - the install must then skip them,
# saying so, and install the rest. A command of the block the test does not
# know fails the test, so the README cannot drift from what is tested.
#
# Then, against the prefix:
#   - samples/consumer (tessera::cpp) is configured with nlohmann_json hidden
#     (CMAKE_DISABLE_FIND_PACKAGE_nlohmann_json) - the package must not need
#     it - built and run with TESSERA_PLUGIN_PATH unset, so the installed
#     libtessera must find the installed CPU plugin next to itself;
#   - with -DTESSERA_CONSUMER_SERIALIZE=ON (find_package component
#     serialize) it is refused, naming nlohmann_json, while that is hidden,
#     and builds and runs a safetensors round trip when it is not;
#   - nothing installed points back into the build or source tree (CMake
#     package files, RUNPATHs), and the installed bin/tessera works and loads
#     the installed plugin.
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

step "README.md's install commands"
# The first ```sh block after the "## Install" heading, comments dropped.
mapfile -t readme_commands < <(awk '
  /^## / { in_section = ($0 == "## Install") }
  in_section && /^```sh$/ { in_block = 1; next }
  in_block && /^```/ { exit }
  in_block { sub(/[[:space:]]+#.*$/, ""); if ($0 != "") print }
' "$source/README.md")
((${#readme_commands[@]} > 0)) || fail "README.md has no \`\`\`sh block under '## Install'"
installed=0
for command in "${readme_commands[@]}"; do
  echo "README: $command"
  if [[ $command == "scripts/run-main" ]]; then
    echo "  (this build tree stands in for the one scripts/run-main builds)"
  elif [[ $command =~ ^cmake\ --install\ build\ --prefix\ [^\ ]+$ ]]; then
    echo "  as: $cmake --install $build --prefix $prefix"
    "$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
      { cat "$work/install.log"; fail "cmake --install failed"; }
    installed=1
  else
    fail "README.md's install block has a command this test does not run: '$command'"
  fi
done
((installed)) || fail "README.md's install block has no 'cmake --install build --prefix P'"

config=$(find "$prefix" -name TesseraConfig.cmake -print -quit)
[[ -n $config ]] || fail "no TesseraConfig.cmake installed under $prefix"
[[ -x $prefix/bin/tessera ]] || fail "bin/tessera was not installed"
[[ -x $prefix/bin/tessera-conformance-suite ]] || fail "bin/tessera-conformance-suite was not installed"
plugin=$(find "$prefix" -path '*/tessera/libtessera-cpu.so' -print -quit)
[[ -n $plugin ]] || fail "no CPU plugin installed (expected <libdir>/tessera/libtessera-cpu.so)"
library=$(find "$prefix" -name 'libtessera.so*' -print -quit)
[[ -n $library ]] || fail "libtessera.so was not installed"
plugin_dir=$(dirname "$plugin")
[[ $plugin_dir == "$(dirname "$library")/tessera" ]] ||
  fail "plugin $plugin is not in <dir of libtessera>/tessera"

step "the device plugins: each built one installed, each unbuilt one skipped with its reason"
for built in "$build"/lib/tessera/libtessera-*.so; do
  [[ -e $built ]] || continue
  [[ -f $plugin_dir/$(basename "$built") ]] || fail "$built was built but not installed"
done
for file in "$plugin_dir"/libtessera-*.so; do
  [[ -f $build/lib/tessera/$(basename "$file") ]] ||
    fail "$file was installed but the build tree has no $(basename "$file")"
done
skipped=$(grep -E '^-- Skipping: libtessera-[a-z0-9_-]+\.so \(not built' "$work/install.log" || true)
while IFS= read -r line; do
  [[ -n $line ]] || continue
  echo "$line"
  name=$(sed -E 's/^-- Skipping: (libtessera-[a-z0-9_-]+\.so).*/\1/' <<<"$line")
  [[ ! -e $build/lib/tessera/$name ]] || fail "$name is built but the install skipped it"
done <<<"$skipped"
[[ -n $skipped ]] || echo "(every configured plugin is built here: none to skip)"

step "the installed package does not refer to the build or source tree"
if grep -rlF -e "$build" -e "$source" "$(dirname "$config")"; then
  fail "the files above refer to $build or $source"
fi
while IFS= read -r -d '' file; do
  if readelf -d "$file" 2>/dev/null | grep -E 'RPATH|RUNPATH' | grep -qF -e "$build" -e "$source"; then
    fail "$file has a RUNPATH into the build or source tree: $(readelf -d "$file" | grep -E 'RPATH|RUNPATH')"
  fi
done < <(find "$prefix" -type f \( -name '*.so*' -o -path '*/bin/*' \) -print0)

consumer_configure() {
  local dir=$1
  shift
  "$cmake" -S "$source/samples/consumer" -B "$dir" -G "$generator" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "$@"
}

step "configure and build samples/consumer against $prefix, nlohmann_json hidden"
consumer_configure "$work/consumer" -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON "$@" \
  >"$work/consumer-configure.log" 2>&1 ||
  { cat "$work/consumer-configure.log"; fail "configuring the consumer without nlohmann_json failed"; }
cat "$work/consumer-configure.log"
grep -q 'tessera::serialize not defined' "$work/consumer-configure.log" ||
  fail "nlohmann_json was not hidden from the consumer (tessera::serialize got defined)"
"$cmake" --build "$work/consumer"

step "run the consumer (TESSERA_PLUGIN_PATH unset)"
output=$("$work/consumer/tessera_consumer") || fail "the consumer failed: $output"
echo "$output"
grep -qx 'sum: 11 22 33 44' <<<"$output" || fail "expected 'sum: 11 22 33 44'"

step "find_package(Tessera COMPONENTS serialize) without nlohmann_json is refused, naming it"
if consumer_configure "$work/refused" -DTESSERA_CONSUMER_SERIALIZE=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON "$@" >"$work/refused.log" 2>&1; then
  cat "$work/refused.log"
  fail "component serialize was accepted with nlohmann_json hidden"
fi
grep -q 'nlohmann_json' "$work/refused.log" ||
  { cat "$work/refused.log"; fail "the refusal does not name nlohmann_json"; }
grep -E 'nlohmann_json' "$work/refused.log" | head -3

step "component serialize with nlohmann_json: a safetensors round trip"
consumer_configure "$work/serialize" -DTESSERA_CONSUMER_SERIALIZE=ON "$@" \
  >"$work/serialize-configure.log" 2>&1 ||
  { cat "$work/serialize-configure.log"; fail "configuring the consumer with serialize failed"; }
"$cmake" --build "$work/serialize" --target tessera_consumer_checkpoint
output=$("$work/serialize/tessera_consumer_checkpoint") || fail "the checkpoint consumer failed: $output"
echo "$output"
grep -qx 'checkpoint: bias 0.5 -1 | weight 1.5 -2 3.25 4' <<<"$output" ||
  fail "expected 'checkpoint: bias 0.5 -1 | weight 1.5 -2 3.25 4'"

step "run the installed bin/tessera devices"
devices=$("$prefix/bin/tessera" devices) || fail "bin/tessera devices failed: $devices"
echo "$devices"
grep -qE '^  cpu:0 ' <<<"$devices" || fail "bin/tessera devices does not list cpu:0"
grep -qF "$plugin" <<<"$devices" || fail "bin/tessera did not load the installed plugin $plugin"
echo "install test: OK"
