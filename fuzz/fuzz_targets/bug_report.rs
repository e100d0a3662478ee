//! cargo-fuzz target `bug_report`: see `faultline::fuzzing::bug_report`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::bug_report(data));
