# cmake --install <build> [--prefix P] installs
#   bin/zerosim                                the CLI
#   lib/libzerosim_<module>.a                  one library per module (sim/CMakeLists.txt)
#   include/sim/<module>/*.hpp, include/calibrate/fit/*.hpp   their public headers
#   lib/cmake/zerosim/                         the package: find_package(zerosim) gives
#                                              zerosim::zerosim (every module) and zerosim::<module>
#   share/zerosim/{topologies,workloads,calibrate/profiles}   the shipped data, which an installed
#                                              zerosim finds beside itself (sim/core/data_dir.hpp)
# Components: `cli` (bin/zerosim), `data` (share/zerosim) and `python` (the module,
# python/CMakeLists.txt) are what a wheel carries (python/pep517/zerosim_build.py stages them
# with `cmake --install --component`); the rest is the C++ package.
# scripts/test-install.sh checks it: the installed CLI with the source tree hidden, and a program
# of its own built against the package.
include(CMakePackageConfigHelpers)

set(ZEROSIM_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/zerosim)
zerosim_module_targets(ZEROSIM_INSTALL_TARGETS)
install(TARGETS zerosim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(TARGETS ${ZEROSIM_INSTALL_TARGETS} libzerosim EXPORT zerosimTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT zerosimTargets NAMESPACE zerosim:: DESTINATION ${ZEROSIM_CONFIG_DIR})

set(ZEROSIM_WITH_MPI OFF)
if(MPI_CXX_FOUND)
  set(ZEROSIM_WITH_MPI ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zerosimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/zerosimConfig.cmake INSTALL_DESTINATION ${ZEROSIM_CONFIG_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zerosimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/zerosimConfig.cmake ${PROJECT_BINARY_DIR}/zerosimConfigVersion.cmake
  DESTINATION ${ZEROSIM_CONFIG_DIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/topologies ${PROJECT_SOURCE_DIR}/workloads
  DESTINATION ${ZEROSIM_INSTALL_DATA_DIR} COMPONENT data)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/calibrate/profiles
  DESTINATION ${ZEROSIM_INSTALL_DATA_DIR}/calibrate COMPONENT data)
