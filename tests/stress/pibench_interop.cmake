# PiBench ABI interop (tests/interop/): a driver and a third-party wrapper
# built only against tests/interop/master_tree_api.hpp, never pmindex's
# headers, run against libpmindex_pibench(.so / _bulk.so) and `pmindex bench`.
add_executable(pibench_driver ${CMAKE_SOURCE_DIR}/tests/interop/pibench_driver.cpp)
target_link_libraries(pibench_driver PRIVATE ${CMAKE_DL_LIBS})
add_library(pibench_map_wrapper SHARED ${CMAKE_SOURCE_DIR}/tests/interop/map_wrapper.cpp)
set_target_properties(pibench_map_wrapper PROPERTIES CXX_VISIBILITY_PRESET hidden)
add_test(NAME pibench_interop
         COMMAND ${CMAKE_SOURCE_DIR}/tests/interop/pibench_interop.sh $<TARGET_FILE:pmindex>
                 $<TARGET_FILE:pibench_driver> $<TARGET_FILE:pmindex_pibench> $<TARGET_FILE:pmindex_pibench_bulk>
                 $<TARGET_FILE:pibench_map_wrapper>)
set_tests_properties(pibench_interop PROPERTIES TIMEOUT 300 LABELS bench)
