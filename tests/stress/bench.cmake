# `pmindex bench` / `pmindex compare` end to end (docs/bench.md): tiny runs,
# JSON/CSV, compare, the PiBench plugin round trip, --recover, parallel modes.
add_test(NAME bench_e2e
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/bench_e2e.sh $<TARGET_FILE:pmindex> $<TARGET_FILE:pmindex_pibench>)
set_tests_properties(bench_e2e PROPERTIES TIMEOUT 300 LABELS bench COST 20)
