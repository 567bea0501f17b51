# fptree / lbtree crash tests beyond the generic list in crashtests.cmake
# (which runs them with small nodes): the default 64-slot FPTree leaf over a
# key space large enough to split, and LB+-Tree with its default inner nodes.
add_test(NAME crash_fptree_default_leaf
         COMMAND $<TARGET_FILE:pmindex> crashtest --index fptree --images 1500 --ops 1200 --keys 3000 --seed 21)
add_test(NAME crash_lbtree_default_inner
         COMMAND $<TARGET_FILE:pmindex> crashtest --index lbtree --images 1500 --ops 800 --keys 1000 --seed 22)
set_tests_properties(crash_fptree_default_leaf crash_lbtree_default_inner PROPERTIES TIMEOUT 300 LABELS crash)
