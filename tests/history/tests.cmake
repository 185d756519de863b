# The history layer: the read strategy (which way a report is read, the
# query a source gets, the store's scan GPU by GPU) and the rollup (stored
# rows summed into coarser ones) on synthetic stores written by the store's
# writer. The stored types, the store's reader and the Prometheus readers
# are tested with the store's writer (store_test) and a Prometheus server
# (fleet_test, fleet_cli_test, integration_test).
ofu_test(history_test history/history_source_test.cc history/history_rollup_test.cc
  history/prometheus_servers_test.cc)
target_link_libraries(history_test PRIVATE ofu_history ofu_sinks SQLite::SQLite3)
