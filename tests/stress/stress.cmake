# `pmindex stress` per index: a few seconds in the default run (persist mode,
# plus dram), longer and wider under the `long` label. Add an index by one
# word; add `--check NAME` runs below for index-specific checks.
set(PMINDEX_STRESS_INDEXES canary wort woart artcow permart fptree lbtree)
foreach(idx ${PMINDEX_STRESS_INDEXES})
  add_test(NAME stress_${idx}
           COMMAND $<TARGET_FILE:pmindex> stress --index ${idx} --threads 2 --seconds 3 --check stats,range)
  add_test(NAME stress_${idx}_dram
           COMMAND $<TARGET_FILE:pmindex> stress --index ${idx} --threads 2 --seconds 2 --mode dram --keys 2000)
  set_tests_properties(stress_${idx} stress_${idx}_dram PROPERTIES TIMEOUT 120)
  add_test(NAME stress_${idx}_long
           COMMAND $<TARGET_FILE:pmindex> stress --index ${idx} --threads 4 --seconds 60 --keys 200000 --check stats,range)
  set_tests_properties(stress_${idx}_long PROPERTIES TIMEOUT 600 LABELS long)
endforeach()
