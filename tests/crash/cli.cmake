# Crash checker runs as a user types them: several threads on a
# single-threaded index (one lock per operation), a value size above an
# index's default value slot (the index is created for it).
add_test(NAME crash_threads_serial COMMAND ${CMAKE_CURRENT_LIST_DIR}/threads_serial.sh $<TARGET_FILE:pmindex>)
set_tests_properties(crash_threads_serial PROPERTIES TIMEOUT 1800 LABELS crash)
add_test(NAME crash_value_slot COMMAND ${CMAKE_CURRENT_LIST_DIR}/value_slot.sh $<TARGET_FILE:pmindex>)
set_tests_properties(crash_value_slot PROPERTIES TIMEOUT 900 LABELS crash)
# Damaged pools that once crashed recovery: a skiplist whose damaged level-0
# nodes overlap, so that relinking the upper levels changed a node's height
# under the loop (rebuild() takes the checked heights first).
add_test(NAME damage_skiplist_overlapping_nodes
         COMMAND sh -c "for c in 663 1929; do $<TARGET_FILE:pmindex> damagetest --index skiplist --cases 3000 --seed 22 --writes --case $c || exit 1; done")
set_tests_properties(damage_skiplist_overlapping_nodes PROPERTIES TIMEOUT 300 LABELS damage)
# A "reproduce:" line's --variant is a 64-bit selector (one bit per line not
# durable): one above 2^32, as printed, replays its image instead of being
# refused as out of range.
add_test(NAME crash_replay_wide_variant
         COMMAND $<TARGET_FILE:pmindex> crashtest --index pmasstree --params leaf=3,inner=3 --ops 300 --keys 48
                 --seed 5 --pool-size 8388608 --point 100 --variant 231684511125)
set_tests_properties(crash_replay_wide_variant PROPERTIES TIMEOUT 120 LABELS crash
                     PASS_REGULAR_EXPRESSION "crashtest pmasstree: 1 images, 0 violations")
