# Studies (docs/studies.md): every studies/*.toml runs at smoke scale, its
# result file, README and report page checked (--resume with the quickest
# study, wort: every rerun draws the report again); the finding evaluation and the
# study-file checks have unit tests of their own (a binary: they link the
# command line's study sources and toml++).
file(GLOB PMINDEX_STUDY_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/studies/*.toml)
foreach(f ${PMINDEX_STUDY_FILES})
  get_filename_component(name ${f} NAME_WE)
  add_test(NAME study_smoke_${name}
           COMMAND ${CMAKE_SOURCE_DIR}/tests/studies/study_smoke.sh $<TARGET_FILE:pmindex> ${name}
                   $<$<STREQUAL:${name},wort>:resume>)
  set_tests_properties(study_smoke_${name} PROPERTIES TIMEOUT 300 LABELS study COST 30)
endforeach()

add_test(NAME study_cli_errors COMMAND ${CMAKE_SOURCE_DIR}/tests/studies/study_errors.sh $<TARGET_FILE:pmindex>
                                      $<TARGET_FILE:pmindex_pibench>)
set_tests_properties(study_cli_errors PROPERTIES TIMEOUT 120 LABELS study)
