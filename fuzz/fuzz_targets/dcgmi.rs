//! cargo-fuzz target `dcgmi`: see `faultline::fuzzing::dcgmi`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::dcgmi(data));
