# `pmindex stress` per index: a few seconds in the default run (persist mode,
# plus dram), longer and wider under the `long` label. Add an index by one
# word; add `--check NAME` runs below for index-specific checks.
set(PMINDEX_STRESS_INDEXES canary wort woart artcow permart fptree lbtree permart-2log)
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

# Self-test: the stress test must catch a use-after-free (canary's
# free_before_durable mutant frees a node readers may still hold; test builds
# only). Probabilistic, so long label only.
if(PMINDEX_TEST_BUILD)
  add_test(NAME stress_selftest_catches_mutant
           COMMAND $<TARGET_FILE:pmindex> stress --index canary --mode dram --seconds 10 --keys 500
                   --params mutant=free_before_durable)
  set_tests_properties(stress_selftest_catches_mutant PROPERTIES WILL_FAIL TRUE TIMEOUT 120 LABELS long)
endif()
