//! cargo-fuzz target `nvidia_smi`: see `faultline::fuzzing::nvidia_smi`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::nvidia_smi(data));
