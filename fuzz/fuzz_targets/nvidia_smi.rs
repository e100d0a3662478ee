//! cargo-fuzz target `nvidia_smi`: see `faultline_fuzz::nvidia_smi`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::nvidia_smi(data));
