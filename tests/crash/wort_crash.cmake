# WORT / WOART / ART+CoW crash tests beyond the generic list in
# crashtests.cmake: exhaustive crash points over a history long enough that
# one node passes Node4 -> 16 -> 48 -> 256 and prefixes split at every depth.
# With 400 keys the checker's first phase is 400 operations of mostly inserts,
# so the 300 operations here only grow: about 70 of the 200 dense keys (one
# node) are present at the end, and the sparse half splits prefixes.
# `--stats` prints the node kinds at the end; the adaptive trees must show a
# Node256, so the growth is proven, not assumed.
foreach(idx wort woart artcow)
  add_test(NAME crash_${idx}_exhaustive_growth
           COMMAND $<TARGET_FILE:pmindex> crashtest --index ${idx} --exhaustive --ops 300 --keys 400 --seed 6 --stats)
  set_tests_properties(crash_${idx}_exhaustive_growth PROPERTIES TIMEOUT 300 LABELS crash)
  if(NOT idx STREQUAL "wort")
    set_tests_properties(crash_${idx}_exhaustive_growth PROPERTIES
                         PASS_REGULAR_EXPRESSION "node256=[1-9]" FAIL_REGULAR_EXPRESSION "[1-9][0-9]* violations")
  endif()
endforeach()
# The checker must catch a WOART insert that changes two fields
# non-atomically: the commit (Node4 meta word, Node16 bitmap, Node48 index
# byte) made durable before the child word. Test builds only, where the
# mutants are compiled in. The test passes only on reported violations (a
# usage error or a crash would not do).
if(PMINDEX_TEST_BUILD)
  foreach(m node4_child_after_meta node16_bitmap_before_child node48_index_before_child)
    add_test(NAME crash_woart_mutant_${m}
             COMMAND $<TARGET_FILE:pmindex> crashtest --index woart --params mutant=${m}
                     --images 1000 --ops 300 --keys 200 --seed 1)
    set_tests_properties(crash_woart_mutant_${m} PROPERTIES
                         PASS_REGULAR_EXPRESSION "images, [1-9][0-9]* violations" TIMEOUT 300 LABELS crash)
  endforeach()
endif()
