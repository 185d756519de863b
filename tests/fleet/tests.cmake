# Fleet analysis (issue 7): MFU logs and corrections, reconciliation,
# change-point detection, the SYNTHETIC fleet simulator end to end, and
# `ofu reconcile`/`ofu regress` on the store and on a real Prometheus server
# (backfilled with promtool; skipped with the reason when either is missing).
ofu_test(fleet_test
  fleet/mfu_log_test.cc
  fleet/reconcile_test.cc
  fleet/training_log_test.cc
  fleet/regress_test.cc
  fleet/fleet_sim_test.cc
  fleet/prometheus_rows_test.cc
  fleet/prometheus_pieces_test.cc)
target_link_libraries(fleet_test PRIVATE ofu_simulation ofu_render_fleet_sim ofu_sinks PkgConfig::HTTPLIB)

find_program(OFU_PROMETHEUS prometheus)
find_program(OFU_PROMTOOL promtool)
find_program(OFU_VICTORIA_METRICS victoria-metrics)
find_program(OFU_VMALERT vmalert)
ofu_cli_test(fleet_cli_test fleet/fleet_cli_test.cc fleet/fleet_scale_test.cc fleet/prometheus_resets_test.cc
  fleet/output_counter_table_test.cc fleet/identity_field_table_test.cc fleet/prometheus_dcgm_test.cc
  fleet/prometheus_hourly_test.cc fleet/dcgm_hourly_test.cc
  fleet/victoria_metrics_test.cc fleet/several_servers_test.cc fleet/federation_test.cc)
target_link_libraries(fleet_cli_test PRIVATE ofu_simulation ofu_sinks PkgConfig::HTTPLIB)
add_dependencies(fleet_cli_test ofu-fleet-sim)
target_compile_definitions(fleet_cli_test PRIVATE
  OFU_PROMETHEUS="${OFU_PROMETHEUS}"
  OFU_PROMTOOL="${OFU_PROMTOOL}"
  OFU_VICTORIA_METRICS="${OFU_VICTORIA_METRICS}"
  OFU_VMALERT="${OFU_VMALERT}"
  OFU_FLEET_SIM="$<TARGET_FILE:ofu-fleet-sim>")
