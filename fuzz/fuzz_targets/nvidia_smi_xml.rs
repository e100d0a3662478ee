//! cargo-fuzz target `nvidia_smi_xml`: see `faultline_fuzz::nvidia_smi_xml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| faultline_fuzz::nvidia_smi_xml(data));
