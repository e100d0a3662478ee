//! cargo-fuzz target `syslog`: see `faultline_fuzz::syslog`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::syslog(data));
