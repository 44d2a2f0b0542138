# The installed CMake package: find_package(Tessera) gives tessera::tessera (the
# library), tessera::abi (the C headers), tessera::sdk (plugin author helpers),
# tessera::cpp (the header-only C++ frontend), tessera::serialize (the frontend's
# safetensors checkpoints, with nlohmann_json) and tessera_add_plugin() for
# plugins built out of tree. Targets join the export sets TesseraTargets and
# TesseraSerializeTargets where they are defined; this file only writes the
# package around them.
#
# Layout under the prefix (the build tree mirrors it), by install component
# (`cmake --install build --component C`; README.md, "Install"):
#   runtime      lib/libtessera.so*
#   plugins      lib/tessera/libtessera-<name>.so
#   tools        bin/tessera, bin/tessera-conformance-suite,
#                share/tessera/conformance/ (golden values, expectations)
#   headers      include/tessera/ (ABI, plugin SDK, C++ frontend)
#   development  lib/cmake/Tessera/{TesseraConfig,TesseraConfigVersion,
#                TesseraTargets*,TesseraSerializeTargets*}.cmake
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)

# The plugin ABI version the package was built with, read from plugin.h so
# there is one source of truth.
file(STRINGS ${PROJECT_SOURCE_DIR}/abi/tessera/plugin.h tessera_abi_defines
     REGEX "^#define TSR_PLUGIN_ABI_(MAJOR|MINOR) [0-9]+")
foreach(line IN LISTS tessera_abi_defines)
  if(line MATCHES "^#define TSR_PLUGIN_ABI_(MAJOR|MINOR) ([0-9]+)")
    set(TESSERA_PLUGIN_ABI_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endif()
endforeach()
if(NOT DEFINED TESSERA_PLUGIN_ABI_MAJOR OR NOT DEFINED TESSERA_PLUGIN_ABI_MINOR)
  message(FATAL_ERROR "cannot read TSR_PLUGIN_ABI_MAJOR/MINOR from abi/tessera/plugin.h")
endif()

install(EXPORT TesseraTargets
  NAMESPACE tessera::
  FILE TesseraTargets.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  COMPONENT development)
install(EXPORT TesseraSerializeTargets
  NAMESPACE tessera::
  FILE TesseraSerializeTargets.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  COMPONENT development)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/TesseraConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR TESSERA_PLUGIN_INSTALL_DIR)
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfigVersion.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  COMPONENT development)
