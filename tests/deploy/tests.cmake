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

# The Kubernetes manifests (deploy/kubernetes/) against the Kubernetes API
# schema (npm kubernetes-models, installed by scripts/install-deps.sh into
# tests/deploy/k8s/node_modules), the choices docs/deploy.md promises, and
# the ConfigMap's agent.toml through the built `ofu agent --check-config`.
# Skipped with the reason when node or the schemas are not installed.
find_program(OFU_NODE node)
add_test(NAME Deploy.KubernetesManifests
  COMMAND sh -c "if [ -z \"$0\" ] || [ ! -d node_modules/kubernetes-models ]; then echo 'skipped: no node, or no tests/deploy/k8s/node_modules (scripts/install-deps.sh)'; exit 77; fi; exec \"$0\" validate.mjs \"$@\""
          "${OFU_NODE}" ${PROJECT_SOURCE_DIR}/deploy/kubernetes $<TARGET_FILE:ofu> ${PROJECT_VERSION}
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/deploy/k8s)
set_tests_properties(Deploy.KubernetesManifests PROPERTIES SKIP_RETURN_CODE 77)
