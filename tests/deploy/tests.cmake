# Installing and packaging (issue 16): `cmake --install` into a temporary
# prefix and the installed program run from there (install_test.py).
add_test(NAME Deploy.InstallIntoPrefixAndRun
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/deploy/install_test.py ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR})

# The Debian package (make deb): CPack into a temporary directory, lintian
# (no errors; warnings listed in docs/deploy.md), then extracted into a
# throwaway root and run from there. Slow (strip, dpkg-shlibdeps, lintian).
get_filename_component(OFU_CMAKE_BIN_DIR ${CMAKE_COMMAND} DIRECTORY)
add_test(NAME Deploy.DebianPackageInstallsAndRuns
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/deploy/deb_test.py ${OFU_CMAKE_BIN_DIR}/cpack
          ${PROJECT_BINARY_DIR} ${PROJECT_VERSION} ${PROJECT_SOURCE_DIR})
set_tests_properties(Deploy.DebianPackageInstallsAndRuns PROPERTIES TIMEOUT 1200)
