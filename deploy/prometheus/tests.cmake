# Prometheus rules: promtool checks them and runs their unit tests; the
# generated zero-deploy rules must be what the generator writes now.
# include()d from tests/CMakeLists.txt (after Python3 is found). Run only
# these with: ctest -R PromRules --output-on-failure

set(OFU_PROM_DIR ${PROJECT_SOURCE_DIR}/deploy/prometheus)

# The zero-deploy rules are `ofu rules dcgm-exporter` from data/gpu_specs.json;
# the committed file must be exactly what ofu writes now (regenerate with
# ofu rules dcgm-exporter > deploy/prometheus/dcgm-exporter-rules.yml).
add_test(NAME PromRules.DcgmExporterRulesRegenerate
  COMMAND sh -c "'$<TARGET_FILE:ofu>' rules dcgm-exporter | cmp - deploy/prometheus/dcgm-exporter-rules.yml"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

# The hourly rollups' rules are `ofu rules hourly` for 15 s scrapes
# (regenerate with: ofu rules hourly > deploy/prometheus/ofu-hourly-rules.yml).
add_test(NAME PromRules.HourlyRulesRegenerate
  COMMAND sh -c "'$<TARGET_FILE:ofu>' rules hourly | cmp - deploy/prometheus/ofu-hourly-rules.yml"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

find_program(PROMTOOL_EXECUTABLE promtool)
if(NOT PROMTOOL_EXECUTABLE)
  message(STATUS "promtool not found: PromRules.Check*/Test* tests are not added")
  return()
endif()

foreach(rules ofu-recording-rules ofu-alert-rules dcgm-exporter-rules ofu-hourly-rules)
  add_test(NAME PromRules.Check.${rules}
    COMMAND ${PROMTOOL_EXECUTABLE} check rules ${rules}.yml
    WORKING_DIRECTORY ${OFU_PROM_DIR})
endforeach()

# The global server of the federation set-up (deploy/prometheus/federation).
add_test(NAME PromRules.Check.federation
  COMMAND ${PROMTOOL_EXECUTABLE} check config federation/global-prometheus.yml
  WORKING_DIRECTORY ${OFU_PROM_DIR})

find_program(OFU_VMAGENT vmagent)
if(OFU_VMAGENT)
  add_test(NAME PromRules.Check.federation-vmagent
    COMMAND ${OFU_VMAGENT} -promscrape.config=federation/vmagent-scrape.yml -promscrape.config.strictParse -dryRun
    WORKING_DIRECTORY ${OFU_PROM_DIR})
endif()

# rule_files in each test are relative to the test file's own directory.
file(GLOB OFU_PROM_RULE_TESTS CONFIGURE_DEPENDS ${OFU_PROM_DIR}/tests/*.test.yml)
foreach(test_file ${OFU_PROM_RULE_TESTS})
  get_filename_component(test_name ${test_file} NAME_WE)
  add_test(NAME PromRules.Test.${test_name}
    COMMAND ${PROMTOOL_EXECUTABLE} test rules ${test_file}
    WORKING_DIRECTORY ${OFU_PROM_DIR}/tests)
endforeach()

# Regression and precision-shift alerts (docs/fleet-analysis.md); their unit
# tests (tests/regression-rules.test.yml) are picked up by the glob above.
add_test(NAME PromRules.Check.ofu-regression-rules
  COMMAND ${PROMTOOL_EXECUTABLE} check rules ofu-regression-rules.yml
  WORKING_DIRECTORY ${OFU_PROM_DIR})
