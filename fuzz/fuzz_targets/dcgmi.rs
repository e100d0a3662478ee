//! cargo-fuzz target `dcgmi`: see `faultline_fuzz::dcgmi`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::dcgmi(data));
