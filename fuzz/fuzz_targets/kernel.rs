//! cargo-fuzz target `kernel`: see `faultline::fuzzing::kernel`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::kernel(data));
