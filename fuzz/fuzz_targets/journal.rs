//! cargo-fuzz target `journal`: see `faultline_fuzz::journal`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::journal(data));
