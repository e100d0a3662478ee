//! cargo-fuzz target `container`: see `faultline_fuzz::container`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::container(data));
