# The tests every registered index gets, made from the registry at test time:
# ctest includes this file (TEST_INCLUDE_FILES), which asks the freshly built
# `pmindex list --json` for the indexes and their test profiles
# (index_tests::tests, each index's tests.cpp) and adds, for each persistent index:
#   crash_<i>_random / _exhaustive / _threads2 / _threads4   the crash checker
#   crash_<i>_bytes / _bytes_exhaustive   byte keys (urls, names) and values, when it takes keys=bytes
#   kill_verify_<i>                 SIGKILL during load, then verify (and _bytes: byte keys, _tx: tx mode)
#   stress_<i> / stress_<i>_dram    concurrent stress, scans checked (and _bytes: byte keys)
#   damage_<i>                      damaged pools: no crash or hang of info / verify / open+check+scan
#   mutant_<i>_<m>                  each mutant caught with its message (test builds)
#   crash_self_test_<i>             every crash mutant caught, the same runs clean without it
#   <checker>_<i>_<name>            the profile's extra tests
# plus the `long` variants (label long: ./scripts/test --long). An index that
# is registered is tested; nothing here names one.
# Inputs (set by the configured wrapper): PMINDEX_BIN, PMINDEX_TEST_DIR.
execute_process(COMMAND ${PMINDEX_BIN} list --json OUTPUT_VARIABLE _json RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  add_test(registry_list_json ${PMINDEX_BIN} list --json)
  return()
endif()

function(_pm_test name labels timeout)
  add_test(${name} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout})
endfunction()

# Splits a space-separated argument string into a list.
macro(_pm_args out text)
  if("${text}" STREQUAL "")
    set(${out} "")
  else()
    separate_arguments(${out} UNIX_COMMAND "${text}")
  endif()
endmacro()

string(JSON _test_build GET "${_json}" test_build)
string(JSON _n LENGTH "${_json}" indexes)
math(EXPR _last "${_n} - 1")
foreach(_i RANGE ${_last})
  string(JSON _e GET "${_json}" indexes ${_i})
  string(JSON _name GET "${_e}" name)
  string(JSON _persistent GET "${_e}" persistent)
  string(JSON _concurrent GET "${_e}" concurrent)
  string(JSON _tests_type TYPE "${_e}" tests)
  string(JSON _kinds GET "${_e}" key_kinds)
  string(JSON _modes GET "${_e}" modes)
  set(_bytes OFF)
  if(_kinds MATCHES "\"bytes\"")
    set(_bytes ON)
  endif()
  if(NOT _persistent)
    continue()
  endif()
  if(NOT _tests_type STREQUAL "OBJECT")
    # A persistent index without a test profile is a registration bug.
    add_test(registry_${_name}_has_test_profile ${CMAKE_COMMAND} -E false)
    continue()
  endif()
  string(JSON _crash_args GET "${_e}" tests crash_args)
  string(JSON _bytes_args GET "${_e}" tests crash_bytes_args)
  string(JSON _stress_args GET "${_e}" tests stress_args)
  string(JSON _images GET "${_e}" tests crash_images)
  string(JSON _kill GET "${_e}" tests kill_verify)
  # The byte runs' datasets (test_profile: urls and names unless the index's
  # longest key needs shorter ones).
  string(JSON _pm_long_keys GET "${_e}" tests bytes_long_dataset)
  string(JSON _pm_short_keys GET "${_e}" tests bytes_short_dataset)
  # Index params of kill/verify and damage (an array's small capacity), and
  # the keys kill/verify loads (0: the script's default).
  string(JSON _pm_params GET "${_e}" tests params)
  string(JSON _kill_keys GET "${_e}" tests kill_keys)
  set(_pp "")
  if(NOT _pm_params STREQUAL "")
    set(_pp --params ${_pm_params})
  endif()
  if(_kill_keys EQUAL 0)
    set(_kk 200000)
    set(_kkb 100000)
  else()
    set(_kk ${_kill_keys})
    set(_kkb ${_kill_keys})
  endif()
  _pm_args(_ca "${_crash_args}")
  _pm_args(_ba "${_bytes_args}")
  _pm_args(_sa "${_stress_args}")
  set(_ct ${PMINDEX_BIN} crashtest --index ${_name} ${_ca})

  # Crash checker: sized so one index's default runs take about a minute on
  # 2 busy cores in the ASan build.
  _pm_test(crash_${_name}_random crash 300 ${_ct} --images ${_images} --ops 2500 --seed 1)
  _pm_test(crash_${_name}_exhaustive crash 300 ${_ct} --exhaustive --ops 50 --keys 16 --seed 2)
  if(_concurrent)
    _pm_test(crash_${_name}_threads2 crash 300 ${_ct} --threads 2 --images 600 --ops 400 --seed 3)
    _pm_test(crash_${_name}_threads4 crash 300 ${_ct} --threads 4 --images 600 --ops 400 --keyset shared --keys 32 --seed 4)
  endif()
  if(_bytes)
    # 3/5 of the random run's images (1500 for the default 2500).
    math(EXPR _bytes_images "${_images} * 3 / 5")
    _pm_test(crash_${_name}_bytes crash 300 ${PMINDEX_BIN} crashtest --index ${_name} --params keys=bytes ${_ba}
             --dataset ${_pm_long_keys} --value-size 100 --images ${_bytes_images} --ops 1500 --seed 7)
    _pm_test(crash_${_name}_bytes_exhaustive crash 300 ${PMINDEX_BIN} crashtest --index ${_name} --params keys=bytes
             ${_ba} --dataset ${_pm_short_keys} --value-size 20 --exhaustive --ops 50 --keys 16 --seed 8)
  endif()
  _pm_test(crash_${_name}_long "crash;long" 3600 ${_ct} --images 100000 --ops 3000 --keys 256 --seed 11)
  _pm_test(crash_${_name}_long_exhaustive "crash;long" 3600 ${_ct} --exhaustive --ops 400 --keys 64 --seed 12)
  if(_concurrent)
    _pm_test(crash_${_name}_long_threads "crash;long" 3600 ${_ct} --threads 4 --images 20000 --ops 3000 --keys 128 --seed 13)
  endif()
  if(_bytes)
    _pm_test(crash_${_name}_long_bytes "crash;long" 3600 ${PMINDEX_BIN} crashtest --index ${_name} --params keys=bytes
             ${_ba} --dataset ${_pm_long_keys} --value-size 100 --images 30000 --ops 3000 --keys 256 --seed 14)
  endif()

  # SIGKILL + verify.
  if(_kill)
    if(_pp STREQUAL "")
      _pm_test(kill_verify_${_name} kill 120 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN} ${_name} 6)
      _pm_test(kill_verify_${_name}_long "kill;long" 1200 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN}
               ${_name} 40 300000 1500)
    else()
      _pm_test(kill_verify_${_name} kill 120 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN} ${_name} 6
               ${_kk} 400 ${_pp})
      _pm_test(kill_verify_${_name}_long "kill;long" 1200 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN}
               ${_name} 40 ${_kk} 1500 ${_pp})
    endif()
    if(_bytes)
      _pm_test(kill_verify_${_name}_bytes kill 120 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN} ${_name} 3
               ${_kkb} 400 --dataset ${_pm_long_keys} --value-size 100 ${_pp})
    endif()
    if(_modes MATCHES "\"tx\"")
      # tx mode: killed inside a transaction, recovery rolls it back. Proof:
      # recovery without the rollback fails rbtree's check() ("a red node with a
      # red child") in round 20 of `PMINDEX_SEED=9 kill_verify.sh pmindex rbtree
      # 30 200000 700 --mode tx` (a kill lands inside a transaction's stores
      # about once in 20 rounds: the short run rarely catches it, the long one does).
      _pm_test(kill_verify_${_name}_tx kill 120 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN} ${_name} 4
               ${_kk} 400 --mode tx ${_pp})
      _pm_test(kill_verify_${_name}_tx_long "kill;long" 1200 ${PMINDEX_TEST_DIR}/crash/kill_verify.sh ${PMINDEX_BIN}
               ${_name} 40 ${_kk} 700 --mode tx ${_pp})
    endif()
  endif()

  # Damaged pools (bit flips, wild words, zeroed/garbage pages, truncation;
  # clean and dirty pools; u64 and keys=bytes): info, verify, open + check
  # + scan and open + check + writes (--writes) answer with an exit code,
  # never a crash or a hang (per-case deadline).
  _pm_test(damage_${_name} damage 900 ${PMINDEX_BIN} damagetest --index ${_name} --cases 200 --seed 21 --writes
           ${_pp})
  _pm_test(damage_${_name}_long "damage;long" 3600 ${PMINDEX_BIN} damagetest --index ${_name} --cases 3000 --seed 22
           --writes ${_pp})

  # Concurrent stress (scans checked for order and completeness).
  if(_concurrent)
    set(_threads 2)
    set(_threads_long 4)
  else()
    set(_threads 1)
    set(_threads_long 1)
  endif()
  _pm_test(stress_${_name} stress 120 ${PMINDEX_BIN} stress --index ${_name} ${_sa} --threads ${_threads}
           --seconds 3 --check stats,range)
  _pm_test(stress_${_name}_dram stress 120 ${PMINDEX_BIN} stress --index ${_name} ${_sa} --threads ${_threads}
           --seconds 2 --mode dram --keys 2000)
  _pm_test(stress_${_name}_long "stress;long" 600 ${PMINDEX_BIN} stress --index ${_name} ${_sa}
           --threads ${_threads_long} --seconds 60 --keys 200000 --check stats,range)
  if(_bytes)
    _pm_test(stress_${_name}_bytes stress 120 ${PMINDEX_BIN} stress --index ${_name} ${_sa} --threads ${_threads}
             --seconds 3 --keys 5000 --check stats,range --dataset ${_pm_long_keys} --value-size 100)
  endif()

  # Mutants: each must be caught, with the violation its tests name; and
  # crash_self_test_<i> (`crashtest --self-test --index <i>`): every crash
  # mutant caught and the same runs clean without it.
  if(_test_build)
    string(JSON _nm LENGTH "${_e}" mutants)
    if(_nm GREATER 0)
      math(EXPR _mlast "${_nm} - 1")
      set(_crash_mutants OFF)
      foreach(_m RANGE ${_mlast})
        string(JSON _mname GET "${_e}" mutants ${_m} name)
        string(JSON _mchecker GET "${_e}" mutants ${_m} checker)
        if(_mchecker STREQUAL "crashtest")
          set(_crash_mutants ON)
        endif()
        string(JSON _margs GET "${_e}" mutants ${_m} args)
        string(JSON _mmsg GET "${_e}" mutants ${_m} message)
        _pm_args(_ma "${_margs}")
        _pm_test(mutant_${_name}_${_mname} "mutant" 300 ${PMINDEX_BIN} ${_mchecker} --index ${_name}
                 --params mutant=${_mname} ${_ma})
        set_tests_properties(mutant_${_name}_${_mname} PROPERTIES PASS_REGULAR_EXPRESSION "${_mmsg}")
      endforeach()
      if(_crash_mutants)
        _pm_test(crash_self_test_${_name} "crash;mutant" 600 ${PMINDEX_BIN} crashtest --self-test --index ${_name})
      endif()
    endif()
  endif()

  # The profile's extra tests.
  string(JSON _nx LENGTH "${_e}" tests extra)
  if(_nx GREATER 0)
    math(EXPR _xlast "${_nx} - 1")
    foreach(_x RANGE ${_xlast})
      string(JSON _xname GET "${_e}" tests extra ${_x} name)
      string(JSON _xargs GET "${_e}" tests extra ${_x} args)
      string(JSON _xpass GET "${_e}" tests extra ${_x} pass)
      string(JSON _xfail GET "${_e}" tests extra ${_x} fail)
      string(JSON _xlong GET "${_e}" tests extra ${_x} long)
      string(JSON _xtb GET "${_e}" tests extra ${_x} test_build_only)
      if(_xtb AND NOT _test_build)
        continue()
      endif()
      _pm_args(_xa "${_xargs}")
      set(_labels extra)
      set(_timeout 300)
      if(_xlong)
        set(_labels "extra;long")
        set(_timeout 1200)
      endif()
      _pm_test(extra_${_name}_${_xname} "${_labels}" ${_timeout} ${PMINDEX_BIN} ${_xa})
      if(NOT _xpass STREQUAL "")
        set_tests_properties(extra_${_name}_${_xname} PROPERTIES PASS_REGULAR_EXPRESSION "${_xpass}")
      endif()
      if(NOT _xfail STREQUAL "")
        set_tests_properties(extra_${_name}_${_xname} PROPERTIES FAIL_REGULAR_EXPRESSION "${_xfail}")
      endif()
    endforeach()
  endif()
endforeach()
