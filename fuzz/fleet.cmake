# Fleet analysis parsers (src/ofu/analysis/mfu_log.h): MFU logs (CSV and
# JSON lines) and per-job corrections (`ofu correct` JSON and the CSV form).
# Seeds: fuzz/corpus/fleet_mfu_log, fuzz/corpus/fleet_correction.
ofu_fuzzer(fuzz_fleet_mfu_log fleet_mfu_log_fuzz.cc)
ofu_fuzzer(fuzz_fleet_correction fleet_correction_fuzz.cc)
