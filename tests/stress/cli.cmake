# The command line as a user meets it: every verb with its defaults for every
# registered index; the README's exit-code table walked code by code.
add_test(NAME verb_defaults COMMAND ${CMAKE_CURRENT_LIST_DIR}/verb_defaults.sh $<TARGET_FILE:pmindex>)
# COST: the longest tests start first (ctest -j), not at the end of the list
# where one would run alone while the other core idles.
set_tests_properties(verb_defaults PROPERTIES TIMEOUT 1800 LABELS cli COST 60)
add_test(NAME readme_exit_codes
         COMMAND ${CMAKE_SOURCE_DIR}/tests/docs/exit_codes.sh $<TARGET_FILE:pmindex> ${CMAKE_SOURCE_DIR}/README.md
                 ${CMAKE_SOURCE_DIR}/include/pmindex/error.hpp)
set_tests_properties(readme_exit_codes PROPERTIES TIMEOUT 600 LABELS cli COST 40)
