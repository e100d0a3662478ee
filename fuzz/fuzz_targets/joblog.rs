//! cargo-fuzz target `joblog`: see `faultline_fuzz::joblog`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::joblog(data));
