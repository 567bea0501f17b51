# PermART crash-checker self-tests: every protocol mutant must be caught
# (the crash tests proper run from the list in crashtests.cmake).
if(PMINDEX_TEST_BUILD)
  foreach(m publish_before_flush flush_without_fence free_before_durable)
    add_test(NAME crash_permart_mutant_${m}
             COMMAND $<TARGET_FILE:pmindex> crashtest --index permart --params mutant=${m} --images 600 --ops 300 --seed 5)
    set_tests_properties(crash_permart_mutant_${m} PROPERTIES WILL_FAIL TRUE TIMEOUT 300 LABELS crash)
  endforeach()
  # 2-Log: a log append that returns before its entry is fenced.
  add_test(NAME crash_permart-2log_mutant_flush_without_fence
           COMMAND $<TARGET_FILE:pmindex> crashtest --index permart-2log --params mutant=flush_without_fence
                   --images 600 --ops 300 --seed 5)
  set_tests_properties(crash_permart-2log_mutant_flush_without_fence PROPERTIES WILL_FAIL TRUE TIMEOUT 300 LABELS crash)
endif()
