# Installing and packaging (issue 16): `cmake --install` into a temporary
# prefix and the installed program run from there (install_test.py).
add_test(NAME Deploy.InstallIntoPrefixAndRun
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/deploy/install_test.py ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR})
