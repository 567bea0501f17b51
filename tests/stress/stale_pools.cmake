# Pools a killed `pmindex stress` left in /dev/shm are removed by the next run.
add_test(NAME stale_pools COMMAND ${CMAKE_CURRENT_LIST_DIR}/stale_pools.sh $<TARGET_FILE:pmindex>)
set_tests_properties(stale_pools PROPERTIES TIMEOUT 120 LABELS stress)
