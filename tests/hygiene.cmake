# Checks on the test run itself. include()d last from tests/CMakeLists.txt,
# after every other test is declared.

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
