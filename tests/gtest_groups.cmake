# One ctest test per GoogleTest suite and parameter (gtest_discover_tests
# makes one per test): every process of a sanitized binary costs ~85 ms of
# CPU to start and to scan for leaks at exit, about 100 CPU seconds over the
# unit tier's ~1,300 tests. The names keep the parameter, so
# `ctest -R roart` (and `./scripts/test --index roart`) still selects an
# index's conformance tests: `Indexes/Conformance.*/roart_persist` runs
# `--gtest_filter=Indexes/Conformance.*/roart_persist`. One test alone:
# the binary with --gtest_filter.
#
# pmindex_gtest_groups(TARGET LABELS labels... TIMEOUT seconds)
function(pmindex_gtest_groups target)
  cmake_parse_arguments(G "" "TIMEOUT" "LABELS" ${ARGN})
  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.txt)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  add_custom_command(
    TARGET ${target} POST_BUILD BYPRODUCTS ${list_file}
    COMMAND ${CMAKE_COMMAND} -D BIN=$<TARGET_FILE:${target}> -D OUT=${list_file}
            -P ${CMAKE_SOURCE_DIR}/tests/gtest_groups_list.cmake
    VERBATIM)
  file(GENERATE OUTPUT ${include_file} CONTENT
"set(PMINDEX_GTEST_BIN [==[$<TARGET_FILE:${target}>]==])
set(PMINDEX_GTEST_LIST [==[${list_file}]==])
set(PMINDEX_GTEST_LABELS [==[${G_LABELS}]==])
set(PMINDEX_GTEST_TIMEOUT ${G_TIMEOUT})
set(PMINDEX_GTEST_DIR [==[${CMAKE_CURRENT_BINARY_DIR}]==])
include([==[${CMAKE_SOURCE_DIR}/tests/gtest_groups_add.cmake]==])
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
