//! cargo-fuzz target `nvidia_smi_xml`: see `faultline::fuzzing::nvidia_smi_xml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline::fuzzing::nvidia_smi_xml(data));
