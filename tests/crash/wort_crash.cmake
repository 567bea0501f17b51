# WORT / WOART / ART+CoW crash tests beyond the generic list in
# crashtests.cmake: exhaustive crash points over histories long enough that
# one node passes Node4 -> 16 -> 48 -> 256 (60 dense keys share a node) and
# prefixes split at every depth (the sparse half of the checker's keys).
foreach(idx wort woart artcow)
  add_test(NAME crash_${idx}_exhaustive_growth
           COMMAND $<TARGET_FILE:pmindex> crashtest --index ${idx} --exhaustive --ops 300 --keys 120 --seed 6)
  set_tests_properties(crash_${idx}_exhaustive_growth PROPERTIES TIMEOUT 300 LABELS crash)
endforeach()
