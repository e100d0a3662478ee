//! Coverage of the CUDA and NCCL result vocabularies (../shared/vocab/cuda-errors.tsv,
//! nccl-results.tsv): every error row is rendered in each wrapper programs print it in
//! (PyTorch new and old, THCudaCheck, a C++ exception, NCCL, nccl-tests with the text on the
//! next line, NVHPC, the CUDA samples' `(error code ...)`, CuPy and JAX/XLA by name; NCCL results
//! as PyTorch, c10d and nccl-tests print them) and scanned. A row is `specific` when every
//! wrapper gives the right kind with the row's code (or its text, for texts two numbers share),
//! `generic` when some wrapper gives only another event, `nothing` when one gives none; a row
//! the data calls benign (success codes) is a recorded decision. Every error row must be specific
//! or a recorded decision. Skipped, with a message, when ../shared/vocab is absent.

use faultline::events::RecognizerSet;
use faultline::scan::scan_buffer;
use faultline::Knowledge;
use std::path::{Path, PathBuf};

fn vocab_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab");
    d.is_dir().then_some(d)
}

/// The data rows of a table (the source line and the header skipped).
fn rows(dir: &Path, name: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    text.lines()
        .skip(2)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// What one row became.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Specific,
    Generic,
    Decision,
    Nothing,
}

/// The events of one rendered record: (kind, code, details).
fn events(set: &RecognizerSet, text: &str) -> Vec<(String, Option<i64>, String, String)> {
    let out = scan_buffer(format!("{text}\n").as_bytes(), set, false, 1000);
    out.events
        .iter()
        .map(|e| {
            let d = &e.draft;
            let get = |k: &str| d.attrs.get(k).unwrap_or("").to_string();
            (d.kind.to_string(), d.code, get("text"), get("nccl_result"))
        })
        .collect()
}

/// The lines a CUDA error row is printed as, by its wrappers.
fn cuda_lines(api: &str, name: &str, number: &str, text: &str) -> Vec<String> {
    let mut v = Vec::new();
    if !text.is_empty() {
        v.push(format!("RuntimeError: CUDA error: {text}"));
        v.push(format!("torch.AcceleratorError: CUDA error: {text}"));
        v.push(format!("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error={number} : {text}"));
        v.push(format!("RuntimeError: cuda runtime error ({number}) : {text} at /pytorch/aten/src/THC/generic/THCStorage.cu:58"));
        v.push(format!("  what():  Error (app-drv.cpp:298): {text}"));
        v.push(format!(
            "node1:1234:5678 [0] init.cc:194 NCCL WARN Cuda failure {number} '{text}'"
        ));
        v.push(format!("   Test CUDA failure common.cu:1007\n   '{text}'"));
        v.push(format!(
            "Failed to allocate device vector A (error code {text})!"
        ));
    }
    match api {
        "runtime" => v.push(format!(
            "cupy_backends.cuda.api.runtime.CUDARuntimeError: {name}: {text}"
        )),
        _ => {
            v.push(format!(
                "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: {name}: {text}"
            ));
            v.push(format!("Accelerator Fatal Error: call to cuCtxCreate returned error {number}\n  ({name}): {text}"));
        }
    }
    v
}

/// Whether a CUDA error row's events name it: the OOM kind for memory exhaustion, else a CUDA
/// error with its number (or its text, which two numbers may share).
fn names_row(
    ev: &[(String, Option<i64>, String, String)],
    kind: &str,
    number: i64,
    text: &str,
) -> bool {
    ev.iter().any(|(k, c, t, _)| {
        // an out-of-memory kind is its own evidence (the framework's recognizer may read it first)
        let by_kind = k == kind && kind != "cuda_error";
        k == kind
            && (by_kind || *c == Some(number) || (!text.is_empty() && t.eq_ignore_ascii_case(text)))
    })
}

/// Rows, then counts per outcome, for one table; prints the figures and the rows not specific.
fn report(table: &str, outcomes: &[(String, Outcome)]) -> [usize; 4] {
    let mut c = [0usize; 4];
    for (_, o) in outcomes {
        c[*o as usize] += 1;
    }
    eprintln!(
        "{table}: rows {:>4}  specific {:>4}  generic {:>4}  decision {:>4}  nothing {:>4}",
        outcomes.len(),
        c[0],
        c[1],
        c[2],
        c[3]
    );
    for (row, o) in outcomes {
        if matches!(o, Outcome::Generic | Outcome::Nothing) {
            eprintln!("  {o:?}: {row}");
        }
    }
    c
}

fn cuda_rows(set: &RecognizerSet, dir: &Path) -> Vec<(String, Outcome)> {
    let t = &set.cuda;
    let mut out = Vec::new();
    for r in rows(dir, "cuda-errors.tsv") {
        let (api, name, number, text) = (&r[0], &r[1], &r[2], &r[3]);
        if api != "runtime" && api != "driver" {
            continue;
        }
        let n: i64 = number.parse().expect("a number");
        if t.by_name(name).is_some_and(|h| h.entry.benign.is_some()) {
            out.push((format!("{name} {n}"), Outcome::Decision));
            continue;
        }
        let kind = t
            .by_name(name)
            .and_then(|h| h.entry.kind.clone())
            .unwrap_or_else(|| "cuda_error".into());
        let mut worst = Outcome::Specific;
        for line in cuda_lines(api, name, number, text) {
            let ev = events(set, &line);
            let o = match (names_row(&ev, &kind, n, text), ev.is_empty()) {
                (true, _) => Outcome::Specific,
                (false, false) => Outcome::Generic,
                (false, true) => Outcome::Nothing,
            };
            if o as usize > worst as usize {
                eprintln!("    {name}: {o:?} for {line:?}");
                worst = o;
            }
        }
        out.push((format!("{name} {n} {text:?}"), worst));
    }
    out
}

fn nccl_rows(set: &RecognizerSet, dir: &Path) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    for r in rows(dir, "nccl-results.tsv") {
        let (name, value, text) = (&r[0], &r[1], &r[2]);
        let Some(entry) = set.cuda.nccl_by_name(name) else {
            // the enum's count (`ncclNumResults`) is no result a call returns
            out.push((format!("{name} (not a result)"), Outcome::Decision));
            continue;
        };
        if entry.benign.is_some() {
            out.push((name.to_string(), Outcome::Decision));
            continue;
        }
        let short = text.split(" (run with").next().unwrap_or(text);
        let lines = [
            format!("RuntimeError: NCCL error: {text}"),
            format!("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, {short}, NCCL version 2.19.3"),
            format!("[rank0]: torch.distributed.DistBackendError: NCCL Error {value}: {short}"),
            format!("gpu5: Test NCCL failure common.cu:343 '{short}'"),
            format!("ncclCommInitRank failed: {name}: {short}"),
        ];
        let mut worst = Outcome::Specific;
        for line in &lines {
            let ev = events(set, line);
            let named = ev.iter().any(|(k, _, _, r)| k == "nccl_error" && r == name);
            let o = match (named, ev.is_empty()) {
                (true, _) => Outcome::Specific,
                (false, false) => Outcome::Generic,
                (false, true) => Outcome::Nothing,
            };
            if o as usize > worst as usize {
                eprintln!("    {name}: {o:?} for {line:?}");
                worst = o;
            }
        }
        out.push((format!("{name} {value} {text:?}"), worst));
    }
    out
}

#[test]
fn cuda_and_nccl_vocabularies_are_covered() {
    let Some(dir) = vocab_dir() else {
        eprintln!(
            "SKIPPED: ../shared/vocab is absent; the CUDA and NCCL coverage was not measured"
        );
        return;
    };
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let set = &k.recognizers;
    let cuda = report("cuda-errors.tsv", &cuda_rows(set, &dir));
    let nccl = report("nccl-results.tsv", &nccl_rows(set, &dir));
    for (table, c) in [("cuda-errors.tsv", cuda), ("nccl-results.tsv", nccl)] {
        assert_eq!(
            c[1] + c[3],
            0,
            "{table}: every error row gives its specific kind or is a recorded decision"
        );
    }
}
