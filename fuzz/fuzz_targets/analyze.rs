//! cargo-fuzz target `analyze`: see `faultline::fuzzing::analyze`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::analyze(data));
