//! cargo-fuzz target `knowledge`: see `faultline_fuzz::knowledge`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::knowledge(data));
