# Every numeric option of every verb refuses bad values with exit code 2
# (the table comes from `pmindex VERB --describe-options`).
add_test(NAME options_table COMMAND ${CMAKE_CURRENT_LIST_DIR}/options_table.sh $<TARGET_FILE:pmindex>)
set_tests_properties(options_table PROPERTIES TIMEOUT 600 LABELS cli COST 20)
