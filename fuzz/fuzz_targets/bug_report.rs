//! cargo-fuzz target `bug_report`: see `faultline_fuzz::bug_report`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::bug_report(data));
