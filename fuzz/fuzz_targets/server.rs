//! cargo-fuzz target `server`: see `faultline_fuzz::server`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::server(data));
