# The Debian package (`make deb`: cpack -G DEB in the build directory →
# build/ofu_<version>_amd64.deb). include()d from deploy/install.cmake: the
# package holds exactly what `cmake --install --prefix /usr` installs, plus
# the Debian files below. docs/deploy.md lists lintian's remaining warnings
# with their reasons.
#
#   Depends      from dpkg-shlibdeps on the binary and the plugin, plus
#                adduser (postinst)
#   postinst     creates the system user `ofu` and /var/lib/ofu (0750)
#   prerm        stops ofu-agent.service on removal
#   postrm       removes /var/lib/ofu on purge
#   conffiles    /etc/ofu/agent.toml
#   copyright, changelog.gz in /usr/share/doc/ofu (lintian requires them)

set(OFU_DEB_DIR ${PROJECT_SOURCE_DIR}/deploy/debian)
set(OFU_DEB_MAINTAINER "ofu developers <ofu-dev@lists.example.org>")

# The changelog of a native package: one entry, for this version, dated by
# SOURCE_DATE_EPOCH when set (reproducible builds) or now.
string(TIMESTAMP OFU_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${OFU_DEB_DIR}/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.gz
  COMMAND gzip -9nf -k ${PROJECT_BINARY_DIR}/debian/changelog
  DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog)
add_custom_target(ofu_deb_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.gz)
install(FILES ${OFU_DEB_DIR}/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ofu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${OFU_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU tensor-core utilization (OFU) per GPU, job and fleet")
# CPack puts the summary first and indents these lines, "." for the blank one.
set(CPACK_PACKAGE_DESCRIPTION "ofu computes Overall FLOP Utilization (OFU) of NVIDIA GPUs, the share of
their peak tensor FLOP rate they deliver, from two on-chip counters (tensor
pipe activity and SM clock) that NVML and DCGM provide, with no change to
the training code.

It has a live view (ofu top), reports per GPU and per job from recordings,
from its own history or from Prometheus, a node agent serving Prometheus
metrics with Slurm and Kubernetes job attribution (ofu-agent.service),
corrections for GEMM tile padding and precision from kernel traces, and
OFU-versus-MFU reconciliation and regression detection for a fleet.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ofu_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${OFU_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${OFU_DEB_DIR}/postinst ${OFU_DEB_DIR}/prerm ${OFU_DEB_DIR}/postrm ${OFU_DEB_DIR}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Installed with CMAKE_INSTALL_PREFIX=/usr and DESTDIR=<staging>, so that the
# install-time script (deploy/install_config.cmake) sees the prefix /usr and
# puts the config in /etc.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
include(CPack)
