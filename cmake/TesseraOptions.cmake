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

# tessera_add_test(NAME name SOURCES ... [LIBRARIES ...] [LABELS ...])
# A GoogleTest executable whose cases are registered one by one with ctest.
function(tessera_add_test)
  # PREFIX (optional): put before each discovered test's name, so one source
  # built twice (another optimisation level) registers distinct tests.
  cmake_parse_arguments(T "" "NAME;PREFIX" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
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
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${T_PREFIX}"
    PROPERTIES LABELS "${labels}" ENVIRONMENT "TESSERA_PLUGINS=cpu")
endfunction()
