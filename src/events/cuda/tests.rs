//! The tables as shipped: lookups by name, text and number, and the drafts of each wrapper.

use super::*;
use crate::events::RecognizerFile;
use crate::model::Layer;

fn tables() -> CudaTables {
    let f: RecognizerFile = toml::from_str(BUILTIN_CUDA).expect("data/cuda.toml parses");
    let t = f.cuda_tables();
    t.check().expect("data/cuda.toml entries are complete");
    t
}

fn drafts(lines: &[&str]) -> Vec<Draft> {
    let following: Vec<String> = lines[1..].iter().map(|s| s.to_string()).collect();
    let rec = Record {
        full: lines[0],
        body: lines[0],
        preceding: &[],
        following: &following,
        rank: None,
    };
    let mut out = Vec::new();
    cuda_drafts(&tables(), &rec, &mut out);
    out
}

#[test]
fn lookups_by_name_text_and_number_agree() {
    let t = tables();
    let by_name = t.by_name("CUDA_ERROR_LAUNCH_FAILED").unwrap();
    let by_text = t.by_text("unspecified launch failure").unwrap();
    assert_eq!(by_name.entry.number, Some(719));
    assert_eq!(by_text.entry.number, Some(719));
    assert_eq!(by_text.name, "cudaErrorLaunchFailure");
    // the longest text wins
    let prior = t
        .by_text("unspecified launch failure in prior launch")
        .unwrap();
    assert_eq!(prior.entry.number, Some(53));
    assert_eq!(
        t.by_number(214).unwrap().entry.layer,
        Some(Layer::GpuMemory)
    );
    assert_eq!(
        t.nccl_by_value(5).unwrap().name.as_deref(),
        Some("ncclInvalidUsage")
    );
}

#[test]
fn each_wrapper_gives_the_error_with_its_reading() {
    let d =
        drafts(&["THCudaCheck FAIL file=/p/x.cu line=265 error=4 : unspecified launch failure"]);
    assert_eq!(
        (d[0].kind, d[0].code, d[0].layer),
        ("cuda_error", Some(719), Some(Layer::Unknown))
    );
    assert_eq!(d[0].attrs.get("printed_code"), Some("4"));
    assert_eq!(d[0].attrs.get("candidates"), Some("hardware,driver_stack"));
    let d = drafts(&["  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized"]);
    assert_eq!(
        (d[0].code, d[0].layer),
        (Some(802), Some(Layer::DriverStack))
    );
    let d = drafts(&[
        "   Test CUDA failure common.cu:1007",
        "   'CUDA-capable device(s) is/are busy or unavailable'",
    ]);
    assert_eq!(d[0].attrs.get("error"), Some("cudaErrorDevicesUnavailable"));
    let d = drafts(&[
        "call to cuCtxCreate returned error 214",
        "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered",
    ]);
    assert_eq!(
        d.iter().map(|d| d.kind).collect::<Vec<_>>(),
        ["cuda_error", "ecc_dbe"]
    );
    assert_eq!(d[0].attrs.get("call"), Some("cuCtxCreate"));
    let d = drafts(&["RuntimeError: CUDA error: out of memory"]);
    assert_eq!(d[0].kind, "cuda_oom");
    let d = drafts(&["RuntimeError: CUDA error: a brand new failure"]);
    assert_eq!(
        (d[0].kind, d[0].layer),
        ("cuda_error", Some(Layer::Unknown))
    );
    assert!(drafts(&["CUBLAS_STATUS_SUCCESS"]).is_empty());
}
