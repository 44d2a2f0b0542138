# tessera_add_plugin(NAME name SOURCES ... [LIBRARIES ...] [OUTPUT_DIRECTORY dir]
#                    [OUTPUT_NAME file-stem] [NO_INSTALL | INSTALL_IF_BUILT])
# Builds a device plugin: a MODULE library that sees only abi/ and plugins/sdk/
# (never the core), exporting only TSR_PLUGIN_ENTRY_SYMBOL. Default output:
# lib/tessera/libtessera-<name>.so in the build tree and the install tree
# (install component `plugins`).
#
# INSTALL_IF_BUILT: the plugins whose toolchain is optional (Vulkan, CUDA,
# HIP). `cmake --install` installs such a plugin when the build made it and
# otherwise says it skipped it and how to build it, so an install after a
# partial build (scripts/run-main builds neither CUDA nor HIP) succeeds.
# Without it the plugin must be built before installing (the CPU plugin).
function(tessera_add_plugin)
  cmake_parse_arguments(P "NO_INSTALL;INSTALL_IF_BUILT" "NAME;OUTPUT_DIRECTORY;OUTPUT_NAME"
                        "SOURCES;LIBRARIES" ${ARGN})
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
  if(P_NO_INSTALL)
    return()
  endif()
  if(P_INSTALL_IF_BUILT)
    install(CODE "if(NOT EXISTS \"$<TARGET_FILE:${target}>\")
  message(STATUS \"Skipping: $<TARGET_FILE_NAME:${target}> (not built; `cmake --build \
${CMAKE_BINARY_DIR} --target ${target}` builds it)\")
endif()" COMPONENT plugins)
    install(TARGETS ${target} LIBRARY DESTINATION ${TESSERA_PLUGIN_INSTALL_DIR} COMPONENT plugins
            OPTIONAL)
  else()
    tessera_install_require_built(${target} plugins)
    install(TARGETS ${target} LIBRARY DESTINATION ${TESSERA_PLUGIN_INSTALL_DIR} COMPONENT plugins)
  endif()
endfunction()

# tessera_install_require_built(target component)
# Placed before a target's install rule: `cmake --install` of `component`
# stops with the file and the command that builds it when the build has not
# made the target yet (CMake's own error names only the file).
function(tessera_install_require_built target component)
  install(CODE "if(NOT EXISTS \"$<TARGET_FILE:${target}>\")
  message(FATAL_ERROR \"cannot install $<TARGET_FILE_NAME:${target}>: it is not built \
($<TARGET_FILE:${target}> is missing); build it first with `cmake --build ${CMAKE_BINARY_DIR}` \
(everything) or `cmake --build ${CMAKE_BINARY_DIR} --target ${target}`; scripts/run-main builds \
what a default install needs\")
endif()" COMPONENT ${component})
endfunction()
