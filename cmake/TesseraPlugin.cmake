# tessera_add_plugin(NAME name SOURCES ... [LIBRARIES ...] [OUTPUT_DIRECTORY dir]
#                    [OUTPUT_NAME file-stem] [NO_INSTALL])
# Builds a device plugin: a MODULE library that sees only abi/ and plugins/sdk/
# (never the core), exporting only TSR_PLUGIN_ENTRY_SYMBOL. Default output:
# lib/tessera/libtessera-<name>.so in the build tree and the install tree.
function(tessera_add_plugin)
  cmake_parse_arguments(P "NO_INSTALL" "NAME;OUTPUT_DIRECTORY;OUTPUT_NAME" "SOURCES;LIBRARIES" ${ARGN})
  set(target tessera-plugin-${P_NAME})
  add_library(${target} MODULE ${P_SOURCES})
  if(NOT P_OUTPUT_DIRECTORY)
    set(P_OUTPUT_DIRECTORY ${TESSERA_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT P_OUTPUT_NAME)
    set(P_OUTPUT_NAME tessera-${P_NAME})
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${P_OUTPUT_NAME}
    PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIRECTORY}
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden)
  target_link_libraries(${target} PRIVATE tessera::sdk tessera_warnings ${P_LIBRARIES})
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${TESSERA_PLUGIN_INSTALL_DIR} COMPONENT plugins)
  endif()
endfunction()
