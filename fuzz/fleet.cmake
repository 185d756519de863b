# Fleet analysis parsers (src/ofu/formats/mfu_log.h, training_log.h): MFU
# logs (CSV and JSON lines), per-job corrections (`ofu correct` JSON and the
# CSV form) and training logs (torchtitan, nanoGPT, nanochat, llm.c, prime-rl,
# modula, Megatron-LM, MaxText, nanotron).
# Seeds: fuzz/corpus/fleet_mfu_log, fleet_correction, fleet_training_log (the
# first lines of the real excerpts in tests/data/training-logs, and one
# SYNTHETIC coloured torchtitan line, nanotron suffixes and impossible MFUs).
ofu_fuzzer(fuzz_fleet_mfu_log fleet_mfu_log_fuzz.cc)
ofu_fuzzer(fuzz_fleet_correction fleet_correction_fuzz.cc)
ofu_fuzzer(fuzz_fleet_training_log fleet_training_log_fuzz.cc)
