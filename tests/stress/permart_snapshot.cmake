# PermART: range queries are atomic snapshots under concurrent writes
# (`--check snapshot`, tools/stress_snapshot.cpp), in persist and dram mode;
# in test builds a deliberately non-atomic scan must be caught.
add_test(NAME stress_permart_snapshot
         COMMAND $<TARGET_FILE:pmindex> stress --index permart --threads 2 --seconds 3 --check snapshot)
add_test(NAME stress_permart_snapshot_dram
         COMMAND $<TARGET_FILE:pmindex> stress --index permart --threads 1 --seconds 2 --mode dram --check snapshot)
add_test(NAME stress_permart-2log_snapshot
         COMMAND $<TARGET_FILE:pmindex> stress --index permart-2log --threads 2 --seconds 3 --check snapshot)
set_tests_properties(stress_permart_snapshot stress_permart_snapshot_dram stress_permart-2log_snapshot
                     PROPERTIES TIMEOUT 120)
add_test(NAME stress_permart_snapshot_long
         COMMAND $<TARGET_FILE:pmindex> stress --index permart --threads 4 --seconds 60 --check snapshot,range)
set_tests_properties(stress_permart_snapshot_long PROPERTIES TIMEOUT 600 LABELS long)
if(PMINDEX_TEST_BUILD)
  add_test(NAME stress_permart_snapshot_catches_nonatomic_scan
           COMMAND $<TARGET_FILE:pmindex> stress --index permart --threads 1 --seconds 3 --mode dram
                   --check snapshot --params mutant=scan_not_atomic)
  set_tests_properties(stress_permart_snapshot_catches_nonatomic_scan PROPERTIES WILL_FAIL TRUE TIMEOUT 120)
endif()
