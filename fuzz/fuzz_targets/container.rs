//! cargo-fuzz target `container`: see `faultline::fuzzing::container`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::container(data));
