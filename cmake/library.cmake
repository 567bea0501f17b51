# The library others link: libpmindex.so (SONAME libpmindex.so.MAJOR.MINOR,
# since a 0.x release promises no ABI) and libpmindex.a, both made of the
# core's objects, with the public headers (include/pmindex), a CMake package
# (find_package(pmindex CONFIG) -> pmindex::pmindex, pmindex::pmindex_static)
# and a pkg-config file (pmindex.pc). `cmake --install <build> --prefix P`
# installs them and the `pmindex` program; docs/library.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The dependencies the core links, found above: public, since the static
# library's users link them too. The package config finds the same ones.
set(PMINDEX_PUBLIC_DEPS Threads::Threads)
set(PMINDEX_PC_REQUIRES "")
if(absl_FOUND)
  list(APPEND PMINDEX_PUBLIC_DEPS absl::btree)
  string(APPEND PMINDEX_PC_REQUIRES " absl_btree")
endif()
if(TBB_FOUND)
  list(APPEND PMINDEX_PUBLIC_DEPS TBB::tbb)
  string(APPEND PMINDEX_PC_REQUIRES " tbb")
endif()
set(PMINDEX_PC_CFLAGS "")
if(NOT PMINDEX_CRASH_SIM)
  set(PMINDEX_PC_CFLAGS " -DPMINDEX_NO_CRASH_SIM")  # pool.hpp's inline persistence primitives
endif()

foreach(_kind shared static)
  string(TOUPPER ${_kind} _type)
  add_library(pmindex_${_kind} ${_type} $<TARGET_OBJECTS:pmindex_core>)
  add_dependencies(pmindex_${_kind} pmindex_core)
  set_target_properties(pmindex_${_kind} PROPERTIES OUTPUT_NAME pmindex)
  target_include_directories(pmindex_${_kind} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(pmindex_${_kind} INTERFACE cxx_std_20)
  if(NOT PMINDEX_CRASH_SIM)
    target_compile_definitions(pmindex_${_kind} INTERFACE PMINDEX_NO_CRASH_SIM)
  endif()
  target_link_libraries(pmindex_${_kind} PUBLIC ${PMINDEX_PUBLIC_DEPS})
endforeach()
# The sanitizer tier of the tests (tests/CMakeLists.txt) installs nothing.
if(PMINDEX_TEST_TIER STREQUAL "unit")
  set_target_properties(pmindex_shared pmindex_static PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
set_target_properties(pmindex_shared PROPERTIES VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR} EXPORT_NAME pmindex)
set_target_properties(pmindex_static PROPERTIES EXPORT_NAME pmindex_static)
# Every symbol the library needs is in it (the checkers are not).
target_link_options(pmindex_shared PRIVATE -Wl,--no-undefined)

install(TARGETS pmindex_shared pmindex_static EXPORT pmindexTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers: the product only (the checkers' and the tests'
# headers are under src/).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/pmindex DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS pmindex RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/pmindex)
install(EXPORT pmindexTargets NAMESPACE pmindex:: DESTINATION ${_cmake_dir})
set(PMINDEX_WITH_ABSL OFF)
set(PMINDEX_WITH_TBB OFF)
if(absl_FOUND)
  set(PMINDEX_WITH_ABSL ON)
endif()
if(TBB_FOUND)
  set(PMINDEX_WITH_TBB ON)
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/pmindexConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/pmindexConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pmindexConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/pmindexConfig.cmake ${CMAKE_BINARY_DIR}/pmindexConfigVersion.cmake
        DESTINATION ${_cmake_dir})

# pmindex.pc, relocatable (its prefix is found from where it lies), so
# `cmake --install --prefix` anywhere gives a working file.
file(RELATIVE_PATH PMINDEX_PC_TO_PREFIX /x/${CMAKE_INSTALL_LIBDIR}/pkgconfig /x)
string(REGEX REPLACE "/$" "" PMINDEX_PC_TO_PREFIX "${PMINDEX_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/pmindex.pc.in ${CMAKE_BINARY_DIR}/pmindex.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/pmindex.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
