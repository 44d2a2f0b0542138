# Compiler settings shared by every Tessera target (warnings, sanitizers, ccache).
find_program(TESSERA_CCACHE ccache)
if(TESSERA_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${TESSERA_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${TESSERA_CCACHE})
endif()

add_library(tessera_warnings INTERFACE)
target_compile_options(tessera_warnings INTERFACE
  "$<$<COMPILE_LANGUAGE:C,CXX>:-Wall;-Wextra>"
  "$<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${TESSERA_WERROR}>>:-Werror>"
  # nvcc (the CUDA plugin): the host compiler's warnings, and nvcc's own
  "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>"
  "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${TESSERA_WERROR}>>:-Werror=all-warnings;-Xcompiler=-Werror>")

if(TESSERA_SANITIZE)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${TESSERA_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=${TESSERA_SANITIZE})
endif()

# Debug information of the C and C++ objects. "full" is what the build type
# gives (-g in Debug and RelWithDebInfo). "lines" (-g1: functions and line
# tables, no variables or types) is what CI builds with (presets ci and asan):
# backtraces, gtest failures and the sanitizers' reports keep their file:line
# frames, while compiling takes ~20 % less CPU time and the objects are ~3x
# smaller (docs/testing.md). Added after the build type's -g, which GCC and
# Clang let the last -g<level> override.
set(TESSERA_DEBUG_INFO "full" CACHE STRING "Debug information: full (the build type's) or lines (-g1)")
set_property(CACHE TESSERA_DEBUG_INFO PROPERTY STRINGS full lines)
if(TESSERA_DEBUG_INFO STREQUAL "lines")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-g1>")
elseif(NOT TESSERA_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "TESSERA_DEBUG_INFO is '${TESSERA_DEBUG_INFO}'; use full or lines")
endif()

# How tessera_add_test registers a GoogleTest executable with ctest. ON: one
# ctest per case (gtest_discover_tests), each case in its own process - what
# the full suite (preset ci) reports. OFF: the executable runs whole, split
# into its SHARDS processes (GoogleTest sharding), with the same labels and
# environment: the same cases, without a process start per case. Preset asan
# uses OFF, where a process start costs ~0.25 s of CPU (AddressSanitizer,
# libtessera, the CPU plugin and oneDNN) and most cases take milliseconds
# (docs/testing.md).
option(TESSERA_CTEST_PER_CASE "Register each GoogleTest case as its own ctest" ON)

# tessera_add_test(NAME name SOURCES ... [LIBRARIES ...] [LABELS ...] [PREFIX p]
#                  [SHARDS n] [DRIVER])
# A GoogleTest executable whose cases are registered one by one with ctest
# (or, with TESSERA_CTEST_PER_CASE OFF, as SHARDS processes, default 1).
#
# DRIVER: the test's own code only drives code compiled elsewhere - the C ABI
# of libtessera, or the `tessera` program as a child process - and includes
# none of the header-only frontend or kernel code, so it is compiled at -O0 in
# every build type: what it judges is built as always, and its -O2 -g compile
# took 2-4x the CPU time (abi_bad_input_test.cpp: 37 s against 10 s).
function(tessera_add_test)
  # PREFIX (optional): put before each discovered test's name, so one source
  # built twice (another optimisation level) registers distinct tests.
  cmake_parse_arguments(T "DRIVER" "NAME;PREFIX;SHARDS" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  if(T_DRIVER)
    target_compile_options(${T_NAME} PRIVATE -O0)
  endif()
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBRARIES} GTest::gtest GTest::gtest_main tessera_warnings)
  target_compile_definitions(${T_NAME} PRIVATE
    TESSERA_TEST_PLUGIN_DIR="${TESSERA_PLUGIN_OUTPUT_DIR}"
    TESSERA_TEST_FAULT_PLUGIN_DIR="${CMAKE_BINARY_DIR}/lib/fault-plugins"
    TESSERA_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # gtest_discover_tests passes PROPERTIES on unquoted, so a label list would
  # lose all but its first entry: the labels travel as one label joined by
  # '-' ("ops-cpu"), which `ctest -L` (a regular expression) still selects by
  # any of its parts.
  string(REPLACE ";" "-" labels "${T_LABELS}")
  # The tests judge the core and the CPU plugin: default plugin discovery
  # loads only the CPU plugin (TESSERA_PLUGINS), so a process does not also
  # start every other device's driver (lavapipe costs ~50 ms per process).
  # Tests of other plugins load them by path.
  if(TESSERA_CTEST_PER_CASE)
    gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${T_PREFIX}"
      PROPERTIES LABELS "${labels}" ENVIRONMENT "TESSERA_PLUGINS=cpu")
    return()
  endif()
  if(NOT T_SHARDS)
    set(T_SHARDS 1)
  endif()
  math(EXPR last "${T_SHARDS} - 1")
  foreach(shard RANGE ${last})
    set(name "${T_PREFIX}${T_NAME}")
    set(env "TESSERA_PLUGINS=cpu")
    if(T_SHARDS GREATER 1)
      string(APPEND name ".shard${shard}")
      list(APPEND env GTEST_TOTAL_SHARDS=${T_SHARDS} GTEST_SHARD_INDEX=${shard})
    endif()
    add_test(NAME ${name} COMMAND ${T_NAME})
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" ENVIRONMENT "${env}")
  endforeach()
endfunction()
