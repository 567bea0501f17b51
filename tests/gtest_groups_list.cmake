# After a test binary links (tests/gtest_groups.cmake): its test list, for
# ctest to read. cmake -D BIN=binary -D OUT=file -P gtest_groups_list.cmake
execute_process(COMMAND ${BIN} --gtest_list_tests OUTPUT_FILE ${OUT}.new RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.new)
  message(FATAL_ERROR "${BIN} --gtest_list_tests failed (${rc})")
endif()
file(RENAME ${OUT}.new ${OUT})
