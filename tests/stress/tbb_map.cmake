# The tbb-map baseline under `pmindex stress` (tests/registry_tests.cmake
# stresses the persistent indexes only): four writers with scans in dram
# mode, its only mode; records and range queries checked at the end; u64
# and byte keys. Present when pmindex was built with oneTBB.
if(TBB_FOUND)
  add_test(NAME stress_tbb-map_dram
           COMMAND $<TARGET_FILE:pmindex> stress --index tbb-map --mode dram --threads 4 --seconds 3 --keys 5000
                   --check stats,range --seed 1)
  add_test(NAME stress_tbb-map_dram_bytes
           COMMAND $<TARGET_FILE:pmindex> stress --index tbb-map --mode dram --threads 4 --seconds 3 --keys 5000
                   --check stats,range --dataset urls --value-size 100 --seed 2)
  set_tests_properties(stress_tbb-map_dram stress_tbb-map_dram_bytes PROPERTIES TIMEOUT 120 LABELS stress)
endif()
