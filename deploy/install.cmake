# Install rules (`cmake --install build --prefix P`), following the FHS.
# include()d from the top-level CMakeLists.txt after apps/ofu. The layout
# under the prefix P (docs/deploy.md):
#
#   P/bin/ofu
#   P/lib/ofu/libofu-kubelet.so        where ofu looks for it: ../lib/ofu/ from
#                                      its own directory (kubelet_plugin.h)
#   P/lib/ofu/libofu-http.so           the HTTP client, found the same way
#                                      (net/http_client.h)
#   P/lib/ofu/slurm/{prolog,epilog}.sh
#   P/lib/systemd/system/ofu-agent.service   (ExecStart names P/bin/ofu)
#   P/etc/ofu/agent.toml               /etc/ofu/agent.toml when P is /usr
#   P/share/ofu/prometheus/*.yml       recording, alert and zero-deploy rules
#   P/share/ofu/grafana/*.json         dashboards
#   P/share/ofu/kubernetes/*.yaml      DaemonSet, Service, ServiceMonitor
#   P/share/ofu/gpu_specs.json         the spec database compiled into ofu,
#                                      to copy and extend (--spec-db)
#   P/share/ofu/recordings/*.om        the bundled recordings: a real H100 one, a SYNTHETIC one
#   P/share/doc/ofu/                   README.md and docs/*.md
#   P/share/man/man1/ofu.1.gz, ofu-COMMAND.1.gz   generated from --help
#
# ofu needs none of the data files to run: the spec database and the HTML
# report's assets are compiled in; the plugins are found relative to the
# binary. So the tree can be moved, and no environment variable is needed.

include(GNUInstallDirs)

# The plugin's directory relative to the binary's is fixed (kubelet_plugin.h
# looks in <bin>/../lib/ofu), so both are fixed here rather than taken from
# GNUInstallDirs, whose libdir is lib/x86_64-linux-gnu on Debian.
set(OFU_INSTALL_PLUGINDIR lib/ofu)

install(TARGETS ofu RUNTIME DESTINATION bin)
install(TARGETS ofu_kubelet_plugin ofu_http_plugin LIBRARY DESTINATION ${OFU_INSTALL_PLUGINDIR})
install(PROGRAMS deploy/slurm/prolog.sh deploy/slurm/epilog.sh DESTINATION ${OFU_INSTALL_PLUGINDIR}/slurm)

# The systemd unit (with ExecStart pointing into the prefix) and the
# configuration under etc: both depend on the prefix given at install time,
# which deploy/install_config.cmake reads when it runs.
install(CODE "set(OFU_DEPLOY_DIR \"${PROJECT_SOURCE_DIR}/deploy\")\nset(OFU_BUILD_DIR \"${PROJECT_BINARY_DIR}\")")
install(SCRIPT deploy/install_config.cmake)

install(FILES
  deploy/prometheus/ofu-recording-rules.yml
  deploy/prometheus/ofu-alert-rules.yml
  deploy/prometheus/ofu-regression-rules.yml
  deploy/prometheus/dcgm-exporter-rules.yml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/ofu/prometheus)
install(DIRECTORY deploy/grafana/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ofu/grafana OPTIONAL
  FILES_MATCHING PATTERN "*.json")
install(DIRECTORY deploy/kubernetes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ofu/kubernetes OPTIONAL
  FILES_MATCHING PATTERN "*.yaml")
install(FILES data/gpu_specs.json DESTINATION ${CMAKE_INSTALL_DATADIR}/ofu)
install(FILES data/recordings/h100-sxm5-stage-a-1s.om data/recordings/synthetic-2xh100-bf16-matmul.om
  data/recordings/README.md
  DESTINATION ${CMAKE_INSTALL_DATADIR}/ofu/recordings)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

# Man pages: ofu(1) and ofu-COMMAND(1), written from the built program's own
# --help by scripts/make_man_pages.sh (help2man), so they cannot drift. Part
# of `all`, not of `make run` (which builds only the ofu target).
find_program(OFU_HELP2MAN help2man)
if(OFU_HELP2MAN)
  set(OFU_MAN_DIR ${PROJECT_BINARY_DIR}/man)
  add_custom_command(
    OUTPUT ${OFU_MAN_DIR}/ofu.1.gz
    COMMAND ${CMAKE_COMMAND} -E env HELP2MAN=${OFU_HELP2MAN}
            ${PROJECT_SOURCE_DIR}/scripts/make_man_pages.sh $<TARGET_FILE:ofu> ${OFU_MAN_DIR}
    DEPENDS ofu ${PROJECT_SOURCE_DIR}/scripts/make_man_pages.sh
    COMMENT "Writing the man pages from ofu --help")
  add_custom_target(ofu_man_pages ALL DEPENDS ${OFU_MAN_DIR}/ofu.1.gz)
  install(DIRECTORY ${OFU_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1.gz")
else()
  message(STATUS "help2man not found: no man pages (scripts/install-deps.sh installs it)")
endif()

# The Debian package (make deb).
include(${PROJECT_SOURCE_DIR}/deploy/debian/package.cmake)
