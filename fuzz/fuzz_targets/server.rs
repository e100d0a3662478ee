//! cargo-fuzz target `server`: see `faultline::fuzzing::server`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::server(data));
