# The net layer: the HTTP request parser, the web config and basic auth
# (its bcrypt thread too), TLS, request dispatch, the connection table and
# its deadlines on a clock of the test's, and the HTTP client through its
# plugin against a loopback server. The server as a whole, under abuse, is
# tested through the agent's endpoint (sinks/metrics_server_test.cc).
ofu_test(net_test
  net/http_request_test.cc
  net/web_config_test.cc
  net/basic_auth_test.cc
  net/tls_test.cc
  net/dispatch_test.cc
  net/connections_test.cc
  net/http_client_test.cc)
target_link_libraries(net_test PRIVATE ofu_net fmt::fmt PkgConfig::HTTPLIB PkgConfig::OFU_WEB)
# A shared library that is not the plugin, for the client to refuse.
add_dependencies(net_test fake_nvml)
target_compile_definitions(net_test PRIVATE OFU_FAKE_NVML_PATH="$<TARGET_SONAME_FILE:fake_nvml>")
