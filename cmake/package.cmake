# The C++ package (issue 22): `cmake --install build --prefix P` installs
#   P/lib/libbraze.so                    graph/ .. runtime/ as one shared library
#   P/include/braze/{graph,...,runtime}/ the headers, included as "runtime/braze.h"
#   P/lib/cmake/braze/                   find_package(braze) -> braze::braze
#   P/bin/braze                          the CLI (tools/CMakeLists.txt)
# examples/cpp/ is a project that builds against it; scripts/check_cpp_package.sh
# (CI) installs, builds and runs it.
#
# One shared library, not the six static archives the build links: a
# static archive's private dependencies (oneDNN, OpenBLAS, xxHash, Zydis,
# OpenMP, nlohmann_json, xbyak) would become the consumer's to find, each
# with its own CMake or pkg-config spelling; a shared library keeps them
# its own. The archives are PIC (CMAKE_POSITION_INDEPENDENT_CODE).
# pip's build (scikit-build-core) makes a Python wheel: no C++ package in it.
if(SKBUILD)
  return()
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(braze_archives braze_graph braze_fusion braze_memplan braze_jit_cpu braze_runtime)
if(TARGET braze_jit_cuda)
  list(APPEND braze_archives braze_jit_cuda)
endif()
# The archives' objects, every one (so that every function a header
# declares is there); linking the archives too brings their dependencies
# and, as every symbol is defined already, no object twice.
list(TRANSFORM braze_archives REPLACE "(.+)" "$<TARGET_OBJECTS:\\1>" OUTPUT_VARIABLE braze_objects)
add_library(braze_library SHARED runtime/library.cpp ${braze_objects})
target_link_libraries(braze_library PRIVATE braze_warnings ${braze_archives})
set_target_properties(braze_library PROPERTIES
  OUTPUT_NAME braze EXPORT_NAME braze
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_compile_features(braze_library INTERFACE cxx_std_20)
target_include_directories(braze_library INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/braze>)

install(TARGETS braze_library EXPORT brazeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Every header of the libraries' folders (jit_cuda/device/ holds the texts
# generated CUDA kernels include, embedded in the library, not for C++ users).
foreach(dir graph fusion memplan jit_cpu jit_cuda runtime)
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braze/${dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "device" EXCLUDE)
endforeach()

set(braze_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/braze)
install(EXPORT brazeTargets NAMESPACE braze:: DESTINATION ${braze_cmake_dir})
configure_package_config_file(cmake/brazeConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/brazeConfig.cmake
                              INSTALL_DESTINATION ${braze_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/brazeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/brazeConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/brazeConfigVersion.cmake
        DESTINATION ${braze_cmake_dir})
