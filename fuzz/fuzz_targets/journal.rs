//! cargo-fuzz target `journal`: see `faultline::fuzzing::journal`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::journal(data));
