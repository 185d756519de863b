# Checks on the tree and on the test run itself. include()d last from
# tests/CMakeLists.txt, after every other test is declared.

# Formatting: every C++ file is as scripts/format.sh (clang-format with the
# committed .clang-format) leaves it. Skipped with the reason where there is
# no clang-format; scripts/install-deps.sh installs it.
find_program(OFU_CLANG_FORMAT clang-format)
add_test(NAME Format.ClangFormat
  COMMAND bash scripts/format.sh --check
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(Format.ClangFormat PROPERTIES
  SKIP_RETURN_CODE 77
  ENVIRONMENT "CLANG_FORMAT=${OFU_CLANG_FORMAT}")

# Labels for the sanitizer run (make test-asan), which leaves both out:
#   static     runs none of ofu's C++ (scripts that regenerate or check files,
#              promtool on committed rules, clang-format, the layer and doc
#              checks): under ASan it would be the same run again.
#   packaging  the Debian package test: the package is made from the normal
#              build; under ASan it spends 70 s in strip, dpkg-shlibdeps and
#              lintian on sanitized programs, which the CLI tests already run.
# `ctest -L static` lists the first kind.
get_property(ofu_all_tests DIRECTORY PROPERTY TESTS)
foreach(test ${ofu_all_tests})
  if(test MATCHES "^(BundledRecording|gpu_table|kernel_throughput|clock_model|ClockTruthRecording|layers|docs|Format)\\."
     OR test MATCHES "^PromRules\\.(Check|Test)\\." OR test STREQUAL "PromRules.DcgmExporterRulesRegenerate"
     OR test MATCHES "^GpuValidate\\.(ScriptSyntax|ImportGraph|PurePython|StageK|ExplainTrain)$"
     OR test STREQUAL "Deploy.GrafanaDashboardsRegenerate")
    set_property(TEST ${test} APPEND PROPERTY LABELS static)
  endif()
endforeach()
set_property(TEST Deploy.DebianPackageInstallsAndRuns APPEND PROPERTY LABELS packaging)

# No test leaves a process behind. Tests declared with add_test() get what
# ofu_test() gives the GoogleTest ones (OFU_TEST_PROPERTIES: the marker in
# their environment, the fixture); NoLeftoverProcesses runs after all of them,
# also when only some are selected (ctest -R), and names what is still
# running (tests/support/no_leftover_processes.py).
get_property(ofu_plain_tests DIRECTORY PROPERTY TESTS)
foreach(test ${ofu_plain_tests})
  set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED ofu_no_leftovers)
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "OFU_TEST_BUILD_TREE=${PROJECT_BINARY_DIR}")
endforeach()
add_test(NAME NoLeftoverProcesses
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/support/no_leftover_processes.py ${PROJECT_BINARY_DIR})
set_tests_properties(NoLeftoverProcesses PROPERTIES FIXTURES_CLEANUP ofu_no_leftovers)
