# The HTML report (`ofu report --html`): the view model from stored rows (units),
# the page as headless Chromium draws it, and the command end to end on a
# store written in the test. Chromium is optional here: the rendering tests
# skip with the reason when none is found (scripts/install-deps.sh installs it).
find_program(OFU_CHROMIUM NAMES chromium chromium-browser)
ofu_cli_test(html_test
  html/html_report_test.cc
  html/html_render_test.cc
  html/html_report_cli_test.cc)
target_link_libraries(html_test PRIVATE ofu_sinks SQLite::SQLite3)
target_compile_definitions(html_test PRIVATE OFU_CHROMIUM="${OFU_CHROMIUM}"
  OFU_FLEET_SIM="$<TARGET_FILE:ofu-fleet-sim>")
add_dependencies(html_test ofu-fleet-sim)

# The example report of docs/html-report.md (scripts/make_report_screenshot.sh):
# a synthetic store, and its page with a synthetic scatter and markers.
add_executable(html_report_example html/make_example_report.cc)
target_link_libraries(html_report_example PRIVATE ofu_render ofu_analysis ofu_sinks ofu_sources ofu_core fmt::fmt)
