//! cargo-fuzz target `kernel`: see `faultline_fuzz::kernel`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::kernel(data));
