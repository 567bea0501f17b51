# Crash-checker tests (docs/crash-checker.md). Every index named here runs
# `pmindex crashtest` in CI: random crash points (a few thousand images),
# exhaustively over a short history, and with 2 and 4 threads; the `long`
# label adds 100k+ images. Add an index by one word in this list.
set(PMINDEX_CRASH_INDEXES canary fptree lbtree wort woart artcow permart permart-2log)
# Extra crashtest options for one index: set(PMINDEX_CRASH_ARGS_<name> ...).
# fptree, lbtree: small nodes so short histories split leaves and inner nodes often.
set(PMINDEX_CRASH_ARGS_fptree --params leaf=4,inner=3)
set(PMINDEX_CRASH_ARGS_lbtree --params inner=3)

# Image counts are sized so one index's default tests take well under two
# minutes on 2 busy cores, also in an ASan+UBSan build (docs/results/crash_checker.md).
foreach(idx ${PMINDEX_CRASH_INDEXES})
  set(_ct $<TARGET_FILE:pmindex> crashtest --index ${idx} ${PMINDEX_CRASH_ARGS_${idx}})
  add_test(NAME crash_${idx}_random COMMAND ${_ct} --images 2500 --ops 2500 --seed 1)
  add_test(NAME crash_${idx}_exhaustive COMMAND ${_ct} --exhaustive --ops 50 --keys 16 --seed 2)
  add_test(NAME crash_${idx}_threads2 COMMAND ${_ct} --threads 2 --images 600 --ops 400 --seed 3)
  add_test(NAME crash_${idx}_threads4 COMMAND ${_ct} --threads 4 --images 600 --ops 400 --keyset shared --keys 32 --seed 4)
  set_tests_properties(crash_${idx}_random crash_${idx}_exhaustive crash_${idx}_threads2 crash_${idx}_threads4
                       PROPERTIES TIMEOUT 300 LABELS crash)
  add_test(NAME crash_${idx}_long COMMAND ${_ct} --images 100000 --ops 3000 --keys 256 --seed 11)
  add_test(NAME crash_${idx}_long_exhaustive COMMAND ${_ct} --exhaustive --ops 400 --keys 64 --seed 12)
  add_test(NAME crash_${idx}_long_threads COMMAND ${_ct} --threads 4 --images 20000 --ops 3000 --keys 128 --seed 13)
  set_tests_properties(crash_${idx}_long crash_${idx}_long_exhaustive crash_${idx}_long_threads
                       PROPERTIES TIMEOUT 3600 LABELS "crash;long")
endforeach()

# The checker must be able to fail: every canary mutant caught (test builds
# only: the mutants are compiled in with PMINDEX_TEST_BUILD).
if(PMINDEX_TEST_BUILD)
  add_test(NAME crash_self_test COMMAND $<TARGET_FILE:pmindex> crashtest --self-test)
  set_tests_properties(crash_self_test PROPERTIES TIMEOUT 300 LABELS crash)
else()
  add_test(NAME crash_self_test_needs_test_build COMMAND $<TARGET_FILE:pmindex> crashtest --self-test)
  set_tests_properties(crash_self_test_needs_test_build PROPERTIES WILL_FAIL TRUE LABELS crash)
endif()
