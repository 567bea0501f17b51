# fptree / lbtree with small nodes: leaf and inner-node splits under 2 threads
# on a few thousand keys (the generic runs are in stress.cmake).
add_test(NAME stress_fptree_small_nodes
         COMMAND $<TARGET_FILE:pmindex> stress --index fptree --params leaf=4,inner=3 --threads 2 --seconds 3
                 --keys 3000 --check stats,range)
add_test(NAME stress_lbtree_small_inner
         COMMAND $<TARGET_FILE:pmindex> stress --index lbtree --params inner=3 --threads 2 --seconds 3
                 --keys 3000 --check stats,range)
set_tests_properties(stress_fptree_small_nodes stress_lbtree_small_inner PROPERTIES TIMEOUT 120)
