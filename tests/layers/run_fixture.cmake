# cmake -DCASE=pass|planted -DLAYERS=<tests/layers> -DWORK=<scratch folder> -DZEROSIM_CMAKE_DIR=<cmake/>
#       [-DCXX=<compiler>] -P run_fixture.cmake
# Configures and builds a copy of fixture/ (tests/layers/CMakeLists.txt registers both cases).
#   pass:    the clean fixture builds, its layer check passing.
#   planted: planted/ files are put into the copy: net.cpp includes a header of step (above net);
#            step.cpp includes topology's private header; a file no module lists; a folder of
#            sources under sim/ that is no module. The files compile, but the build must fail,
#            the layer check naming each violation.
cmake_minimum_required(VERSION 3.25)
foreach(v CASE LAYERS WORK ZEROSIM_CMAKE_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "run_fixture.cmake: -D${v}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(COPY ${LAYERS}/fixture/ DESTINATION ${WORK}/src)
set(src ${WORK}/src)
set(expected)
if(CASE STREQUAL "planted")
  file(COPY_FILE ${LAYERS}/planted/net_includes_step.cpp ${src}/sim/net/net.cpp)
  file(COPY_FILE ${LAYERS}/planted/step_includes_private.cpp ${src}/sim/step/step.cpp)
  file(COPY_FILE ${LAYERS}/planted/unlisted.cpp ${src}/sim/net/unlisted.cpp)
  file(MAKE_DIRECTORY ${src}/sim/result)
  file(COPY_FILE ${LAYERS}/planted/unlisted.cpp ${src}/sim/result/result.cpp)
  set(expected
    "layer check: sim/net/net.cpp includes sim/step/step.hpp, but net does not depend on step (net's DEPENDS in CMakeLists.txt: topology)"
    "layer check: sim/step/step.cpp includes sim/topology/graph.hpp, which is private to topology"
    "layer check: sim/net/unlisted.cpp is in net's folder but not listed in its zerosim_module()"
    "layer check: sim/result/ holds sources (sim/result/result.cpp) but is no module"
    "layer check: 4 violation(s)")
elseif(NOT CASE STREQUAL "pass")
  message(FATAL_ERROR "run_fixture.cmake: unknown CASE '${CASE}'")
endif()

set(compiler)
if(CXX)
  set(compiler -DCMAKE_CXX_COMPILER=${CXX})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${src} -B ${WORK}/build
  -DZEROSIM_CMAKE_DIR=${ZEROSIM_CMAKE_DIR} ${compiler}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the fixture's configure failed (exit ${rc}):\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(CASE STREQUAL "pass")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "layer check: 4 modules, every include allowed")
    message(FATAL_ERROR "the clean fixture must build and pass the layer check (exit ${rc}):\n${out}")
  endif()
  message(STATUS "pass: the clean fixture built, layer check passed")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the build with planted violations succeeded; it must fail:\n${out}")
endif()
foreach(e ${expected})
  string(FIND "${out}" "${e}" at)
  if(at LESS 0)
    message(FATAL_ERROR "the build failed, but its output lacks \"${e}\":\n${out}")
  endif()
endforeach()
message(STATUS "planted: the build failed (exit ${rc}) naming every planted violation:\n${out}")
