//! cargo-fuzz target `knowledge`: see `faultline::fuzzing::knowledge`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::knowledge(data));
