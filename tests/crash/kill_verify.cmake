# SIGKILL + verify test (tests/crash/kill_verify.sh) per index: a few rounds
# in the default run, many under the `long` label. Add an index by one word.
set(PMINDEX_KILL_INDEXES canary wort woart artcow permart permart-2log fptree lbtree)
foreach(idx ${PMINDEX_KILL_INDEXES})
  add_test(NAME kill_verify_${idx}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/kill_verify.sh $<TARGET_FILE:pmindex> ${idx} 6)
  set_tests_properties(kill_verify_${idx} PROPERTIES TIMEOUT 120)
  add_test(NAME kill_verify_${idx}_long
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/kill_verify.sh $<TARGET_FILE:pmindex> ${idx} 40 300000 1500)
  set_tests_properties(kill_verify_${idx}_long PROPERTIES TIMEOUT 1200 LABELS long)
endforeach()
