# zerosim's modules: one static library per folder, each declaring the modules it may use. The
# declarations (sim/CMakeLists.txt) are the one statement of the layering; the layer check
# (cmake/CheckLayers.cmake, target zerosim_layer_check, part of ALL) enforces it on every build.
#
# zerosim_module(NAME <name> DIR <folder, from the project root>
#                SOURCES <.cpp ...> HEADERS <public .hpp ...> [PRIVATE_HEADERS <.hpp ...>]
#                [OTHER_SOURCES <.cpp ...>] [DEPENDS <modules ...>] [LIBS <link items ...>]
#                [PRIVATE_LIBS <link items ...>])
# File names are relative to DIR. OTHER_SOURCES are files of the folder built into other targets
# (the CLI's main.cpp): checked like the module's own files, not compiled into its library. Makes the static library zerosim_<name> (alias zerosim::<name>,
# exported as zerosim::<name>) linking DEPENDS' libraries and LIBS publicly. A module may depend
# only on modules declared before it, so the graph has no cycle. HEADERS are installed under
# include/<DIR>; PRIVATE_HEADERS are for the module's own files (and its tests) only: not installed,
# and no other module, nor a public header of the module itself, may include them.
#
# zerosim_layer_check(MODULE_ROOTS <folders>) (after the last module): writes the declarations to
# <build>/zerosim_layers.cmake and adds the check, rerun whenever a module's file changes. Every
# folder directly under a MODULE_ROOTS folder (sim/) must be a module.

include(GNUInstallDirs)
set(ZEROSIM_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(zerosim_module)
  cmake_parse_arguments(PARSE_ARGV 0 M "" "NAME;DIR"
    "SOURCES;HEADERS;PRIVATE_HEADERS;OTHER_SOURCES;DEPENDS;LIBS;PRIVATE_LIBS")
  if(M_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "zerosim_module(${M_NAME}): unknown arguments ${M_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT M_NAME OR NOT M_DIR)
    message(FATAL_ERROR "zerosim_module: NAME and DIR are required")
  endif()
  get_property(modules GLOBAL PROPERTY ZEROSIM_MODULES)
  if(M_NAME IN_LIST modules)
    message(FATAL_ERROR "zerosim_module(${M_NAME}): declared twice")
  endif()
  foreach(dep ${M_DEPENDS})
    if(NOT dep IN_LIST modules)
      message(FATAL_ERROR "zerosim_module(${M_NAME}): DEPENDS ${dep}, which is not declared before "
        "it (${CMAKE_CURRENT_LIST_FILE}); modules are declared in dependency order, so that the "
        "graph has no cycle")
    endif()
  endforeach()

  set(target zerosim_${M_NAME})
  set(root ${PROJECT_SOURCE_DIR}/${M_DIR})
  list(TRANSFORM M_SOURCES PREPEND ${root}/ OUTPUT_VARIABLE sources)
  list(TRANSFORM M_HEADERS PREPEND ${root}/ OUTPUT_VARIABLE headers)
  list(TRANSFORM M_PRIVATE_HEADERS PREPEND ${root}/ OUTPUT_VARIABLE private_headers)
  list(TRANSFORM M_DEPENDS PREPEND zerosim_ OUTPUT_VARIABLE dep_targets)
  if(sources)
    add_library(${target} STATIC ${sources} ${headers} ${private_headers})
    set(scope PUBLIC)
    if(COMMAND zerosim_warnings)
      zerosim_warnings(${target})
    endif()
  else()  # header-only
    add_library(${target} INTERFACE ${headers} ${private_headers})
    set(scope INTERFACE)
  endif()
  add_library(zerosim::${M_NAME} ALIAS ${target})
  # OPTIMIZE_DEPENDENCIES: a static library need not wait for those it links to be archived.
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${M_NAME} OUTPUT_NAME zerosim_${M_NAME}
    OPTIMIZE_DEPENDENCIES ON)
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<INSTALL_INTERFACE:include>)
  target_link_libraries(${target} ${scope} ${dep_targets} ${M_LIBS})
  if(M_PRIVATE_LIBS)
    if(NOT sources)
      message(FATAL_ERROR "zerosim_module(${M_NAME}): PRIVATE_LIBS need SOURCES")
    endif()
    target_link_libraries(${target} PRIVATE ${M_PRIVATE_LIBS})
  endif()

  set_property(GLOBAL APPEND PROPERTY ZEROSIM_MODULES ${M_NAME})
  file(RELATIVE_PATH declared_in ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_LIST_FILE})
  set(files ${M_SOURCES} ${M_HEADERS} ${M_OTHER_SOURCES})
  set(private ${M_PRIVATE_HEADERS})
  list(TRANSFORM files PREPEND ${M_DIR}/)
  list(TRANSFORM private PREPEND ${M_DIR}/)
  set_property(GLOBAL PROPERTY ZEROSIM_MODULE_${M_NAME}_DIR ${M_DIR})
  set_property(GLOBAL PROPERTY ZEROSIM_MODULE_${M_NAME}_DEPENDS ${M_DEPENDS})
  set_property(GLOBAL PROPERTY ZEROSIM_MODULE_${M_NAME}_FILES ${files})
  set_property(GLOBAL PROPERTY ZEROSIM_MODULE_${M_NAME}_PRIVATE ${private})
  set_property(GLOBAL PROPERTY ZEROSIM_MODULE_${M_NAME}_DECLARED_IN ${declared_in})
  if(headers)
    install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${M_DIR})
  endif()
endfunction()

# The declared modules' targets, in declaration (dependency) order.
function(zerosim_module_targets out)
  get_property(modules GLOBAL PROPERTY ZEROSIM_MODULES)
  list(TRANSFORM modules PREPEND zerosim_)
  set(${out} ${modules} PARENT_SCOPE)
endfunction()

function(zerosim_layer_check)
  cmake_parse_arguments(PARSE_ARGV 0 C "" "" "MODULE_ROOTS")
  get_property(modules GLOBAL PROPERTY ZEROSIM_MODULES)
  set(manifest "# Written by zerosim_layer_check() (cmake/ZerosimModules.cmake); read by CheckLayers.cmake.\n")
  string(APPEND manifest "set(LAYER_MODULES ${modules})\n")
  string(APPEND manifest "set(LAYER_MODULE_ROOTS ${C_MODULE_ROOTS})\n")
  set(inputs)
  foreach(m ${modules})
    foreach(key DIR DEPENDS FILES PRIVATE DECLARED_IN)
      get_property(v GLOBAL PROPERTY ZEROSIM_MODULE_${m}_${key})
      string(APPEND manifest "set(LAYER_${m}_${key} ${v})\n")
    endforeach()
    get_property(files GLOBAL PROPERTY ZEROSIM_MODULE_${m}_FILES)
    get_property(private GLOBAL PROPERTY ZEROSIM_MODULE_${m}_PRIVATE)
    foreach(f ${files} ${private})
      list(APPEND inputs ${PROJECT_SOURCE_DIR}/${f})
    endforeach()
  endforeach()
  # Rewritten only when the declarations change, so that an unchanged build stays up to date.
  set(out ${CMAKE_BINARY_DIR}/zerosim_layers.cmake)
  file(WRITE ${out}.tmp "${manifest}")
  file(COPY_FILE ${out}.tmp ${out} ONLY_IF_DIFFERENT)
  set(stamp ${CMAKE_BINARY_DIR}/zerosim_layers.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DMANIFEST=${out} -DSTAMP=${stamp}
      -P ${ZEROSIM_CMAKE_DIR}/CheckLayers.cmake
    DEPENDS ${inputs} ${out} ${ZEROSIM_CMAKE_DIR}/CheckLayers.cmake
    COMMENT "zerosim: checking the module layers (cmake/CheckLayers.cmake)"
    VERBATIM)
  add_custom_target(zerosim_layer_check ALL DEPENDS ${stamp})
endfunction()
