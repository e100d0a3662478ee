//! cargo-fuzz target `joblog`: see `faultline::fuzzing::joblog`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::joblog(data));
