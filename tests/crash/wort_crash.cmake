# WORT / WOART / ART+CoW crash tests beyond the generic list in
# crashtests.cmake: exhaustive crash points over histories long enough that
# one node passes Node4 -> 16 -> 48 -> 256 (60 dense keys share a node) and
# prefixes split at every depth (the sparse half of the checker's keys).
foreach(idx wort woart artcow)
  add_test(NAME crash_${idx}_exhaustive_growth
           COMMAND $<TARGET_FILE:pmindex> crashtest --index ${idx} --exhaustive --ops 300 --keys 120 --seed 6)
  set_tests_properties(crash_${idx}_exhaustive_growth PROPERTIES TIMEOUT 300 LABELS crash)
endforeach()
# The checker must catch a WOART update that changes two fields
# non-atomically (the Node4 meta word made durable before its child word):
# test builds only, where the mutant is compiled in.
if(PMINDEX_TEST_BUILD)
  add_test(NAME crash_woart_mutant_node4_child_after_meta
           COMMAND $<TARGET_FILE:pmindex> crashtest --index woart --params mutant=node4_child_after_meta
                   --images 500 --ops 200 --seed 1)
  set_tests_properties(crash_woart_mutant_node4_child_after_meta PROPERTIES WILL_FAIL TRUE TIMEOUT 300 LABELS crash)
endif()
