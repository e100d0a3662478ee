//! cargo-fuzz target `analyze`: see `faultline_fuzz::analyze`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::analyze(data));
