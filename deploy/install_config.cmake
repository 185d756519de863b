# Install-time part of deploy/install.cmake: the files whose place or content
# depends on the prefix given to `cmake --install --prefix P` (or CPack's),
# which only this script, run at install time, sees as CMAKE_INSTALL_PREFIX.
#
#   configuration  P/etc/ofu/agent.toml, or /etc/ofu/agent.toml when P is
#                  /usr (as GNUInstallDirs does for /usr)
#   systemd unit   P/lib/systemd/system/ofu-agent.service, ExecStart=P/bin/ofu
#
# file(INSTALL) puts $ENV{DESTDIR} in front of absolute paths (CPack stages
# the package that way) and records the files in install_manifest.txt.
# OFU_DEPLOY_DIR (the source tree's deploy/) and OFU_BUILD_DIR are set by
# install.cmake.

set(prefix "${CMAKE_INSTALL_PREFIX}")
if(prefix STREQUAL "/usr")
  set(etc_dir "/etc/ofu")
else()
  set(etc_dir "${prefix}/etc/ofu")
endif()

# An edited agent.toml is the operator's: a second install keeps it (the
# Debian package marks it a conffile, so dpkg asks instead).
if(EXISTS "$ENV{DESTDIR}${etc_dir}/agent.toml")
  message(STATUS "Keeping: $ENV{DESTDIR}${etc_dir}/agent.toml (already there)")
else()
  file(INSTALL "${OFU_DEPLOY_DIR}/agent.toml" DESTINATION "${etc_dir}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ
                                                                                  WORLD_READ)
endif()

# The unit in the source tree names /usr/local/bin/ofu (its header says how to
# install it by hand); the installed one names this prefix's binary.
file(READ "${OFU_DEPLOY_DIR}/ofu-agent.service" unit)
string(REPLACE "/usr/local/bin/ofu " "${prefix}/bin/ofu " unit "${unit}")
string(REPLACE "/etc/ofu/agent.toml" "${etc_dir}/agent.toml" unit "${unit}")
string(REPLACE "file:///usr/share/doc/ofu/" "file://${prefix}/share/doc/ofu/" unit "${unit}")
set(staged "${OFU_BUILD_DIR}/install-staging/ofu-agent.service")
file(WRITE "${staged}" "${unit}")
file(INSTALL "${staged}" DESTINATION "${prefix}/lib/systemd/system" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ
                                                                               WORLD_READ)
