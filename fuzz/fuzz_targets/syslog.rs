//! cargo-fuzz target `syslog`: see `faultline::fuzzing::syslog`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::syslog(data));
