//! The wrappers programs print a CUDA error in, parsed with nom. The CUDA library only returns a
//! code; the program around it prints the code's text, number or name in its own words:
//!
//! | wrapper | line |
//! |---|---|
//! | `pytorch` | `RuntimeError: CUDA error: an illegal memory access was encountered` (also `torch.AcceleratorError`, `what():  CUDA error: ...`) |
//! | `thcudacheck` | `THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=4 : unspecified launch failure` (PyTorch <= 1.x) |
//! | `runtime_error` | `RuntimeError: cuda runtime error (710) : device-side assert triggered at ...` (PyTorch <= 1.x) |
//! | `nccl_tests` | `Test CUDA failure common.cu:1007` with `'<text>'` on the same or the next line |
//! | `nccl` | `NCCL WARN Cuda failure 'out of memory'`, `Cuda failure 999 'unknown error'` |
//! | `nvhpc` | `call to cuCtxCreate returned error 214` with `(CUDA_ERROR_ECC_UNCORRECTABLE): ...` on the next line |
//! | `error_code` | `Failed to allocate device vector A (error code out of memory)!` (CUDA samples), `(error code 2)` |
//! | `cxx` | `what():  Error (gpu_burn-drv.cpp:298): system not yet initialized` (a C++ exception whose text is a CUDA error's) |
//! | `by_name` | `cudaErrorIllegalAddress: ...` (CuPy), `CUDA_ERROR_ILLEGAL_ADDRESS: ...` (JAX/XLA, TensorFlow), `CUBLAS_STATUS_EXECUTION_FAILED`, `CUDNN_STATUS_INTERNAL_ERROR` |

use nom::{
    bytes::complete::{tag, tag_no_case, take_till, take_till1, take_while1},
    character::complete::{char, digit1, space0, space1},
    combinator::{map_res, opt, recognize},
    sequence::{delimited, preceded, terminated},
    IResult,
};

/// What one wrapper says of a CUDA error: its name, number or text (any of them), and where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wrapped<'a> {
    /// Which wrapper (see the table above).
    pub wrapper: &'static str,
    /// The error's name as printed (`cudaErrorIllegalAddress`, `CUDA_ERROR_ECC_UNCORRECTABLE`).
    pub name: Option<&'a str>,
    /// The number as printed (old runtimes numbered differently: the text decides first).
    pub number: Option<i64>,
    /// The text as printed, with what follows it on the line.
    pub text: Option<&'a str>,
    /// The API call that failed (`cuCtxCreate`).
    pub call: Option<&'a str>,
    /// The source place the program names (`common.cu:1007`).
    pub site: Option<&'a str>,
    /// The text stands on the next line (the wrapper's line only announces it).
    pub text_on_next_line: bool,
}

/// The name prefixes of CUDA errors and library statuses.
pub const NAME_PREFIXES: [&str; 4] = [
    "cudaError",
    "CUDA_ERROR_",
    "CUBLAS_STATUS_",
    "CUDNN_STATUS_",
];

fn number(i: &str) -> IResult<&str, i64> {
    map_res(recognize(preceded(opt(char('-')), digit1)), str::parse)(i)
}

/// The rest of the line.
fn rest_of_line(i: &str) -> IResult<&str, &str> {
    take_till(|c| c == '\n')(i)
}

/// `'text'` up to the last quote of the line (texts hold apostrophes: `device doesn't have
/// valid Grid license`), or `'text` up to the end of the line when the closing quote is missing.
fn quoted(i: &str) -> IResult<&str, &str> {
    let (i, _) = char('\'')(i)?;
    let (rest, line) = take_till(|c| c == '\n')(i)?;
    let t = line.rfind('\'').map_or(line, |q| &line[..q]);
    Ok((rest, t))
}

fn thcudacheck(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, _) = tag("THCudaCheck FAIL file=")(i)?;
    let (i, file) = take_till1(|c| c == ' ')(i)?;
    let (i, _) = preceded(tag(" line="), digit1)(i)?;
    let (i, n) = preceded(tag(" error="), number)(i)?;
    let (i, text) = preceded(delimited(space0, char(':'), space0), rest_of_line)(i)?;
    let w = Wrapped {
        wrapper: "thcudacheck",
        number: Some(n),
        text: Some(text),
        site: Some(file),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn runtime_error(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, n) = delimited(tag_no_case("cuda runtime error ("), number, char(')'))(i)?;
    let (i, text) = preceded(delimited(space0, char(':'), space0), rest_of_line)(i)?;
    let w = Wrapped {
        wrapper: "runtime_error",
        number: Some(n),
        text: Some(text),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn nccl_tests(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, _) = tag("Test CUDA failure ")(i)?;
    let (i, site) = take_till1(|c: char| c.is_whitespace() || c == '\'')(i)?;
    let (i, text) = opt(preceded(space0, quoted))(i)?;
    let w = Wrapped {
        wrapper: "nccl_tests",
        text,
        site: Some(site),
        text_on_next_line: text.is_none(),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn nccl(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, _) = tag("Cuda failure ")(i)?;
    let (i, n) = opt(terminated(number, space1))(i)?;
    let (i, text) = quoted(i)?;
    let w = Wrapped {
        wrapper: "nccl",
        number: n,
        text: Some(text),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn nvhpc(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, call) = preceded(
        tag("call to "),
        take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    )(i)?;
    let (i, n) = preceded(tag(" returned error "), number)(i)?;
    // the name and text may follow on the same line: `... error 214: CUDA_ERROR_...`
    let (i, tail) = rest_of_line(i)?;
    let on_line = tail.trim_start_matches([':', ' ']);
    let w = Wrapped {
        wrapper: "nvhpc",
        number: Some(n),
        call: Some(call),
        text: (!on_line.is_empty()).then_some(on_line),
        text_on_next_line: on_line.is_empty(),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn pytorch(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, _) = tag_no_case("CUDA error")(i)?;
    let (i, n) = opt(preceded(space1, number))(i)?;
    let (i, text) = preceded(terminated(char(':'), space0), rest_of_line)(i)?;
    let w = Wrapped {
        wrapper: "pytorch",
        number: n,
        text: Some(text),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn error_code(i: &str) -> IResult<&str, Wrapped<'_>> {
    // the text may hold parentheses itself: it runs to the end of the line (the tables read
    // it by its beginning)
    let (i, inner) = preceded(tag("(error code "), take_till1(|c| c == '\n'))(i)?;
    let n = terminated(number, char(')'))(inner).ok().map(|(_, n)| n);
    let w = Wrapped {
        wrapper: "error_code",
        number: n,
        text: n.is_none().then_some(inner),
        ..Wrapped::default()
    };
    Ok((i, w))
}

fn cxx(i: &str) -> IResult<&str, Wrapped<'_>> {
    let (i, _) = preceded(tag("what():"), space0)(i)?;
    let (i, site) = delimited(
        tag("Error ("),
        take_till1(|c| c == ')' || c == '\n'),
        char(')'),
    )(i)?;
    let (i, text) = preceded(terminated(char(':'), space0), rest_of_line)(i)?;
    let w = Wrapped {
        wrapper: "cxx",
        text: Some(text),
        site: Some(site),
        ..Wrapped::default()
    };
    Ok((i, w))
}

/// A name (`CUDA_ERROR_ILLEGAL_ADDRESS`), then `): text`, `: text` or nothing.
pub fn by_name(i: &str) -> IResult<&str, Wrapped<'_>> {
    if !NAME_PREFIXES.iter().any(|p| i.starts_with(p)) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Tag,
        )));
    }
    let (i, name) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_')(i)?;
    let (i, _) = opt(char(')'))(i)?;
    let (i, text) = opt(preceded(terminated(char(':'), space0), rest_of_line))(i)?;
    let w = Wrapped {
        wrapper: "by_name",
        name: Some(name),
        text: text.filter(|t| !t.is_empty()),
        ..Wrapped::default()
    };
    Ok((i, w))
}

type Parser = for<'a> fn(&'a str) -> IResult<&'a str, Wrapped<'a>>;

/// Each wrapper with the literal it starts with, most specific first.
const WRAPPERS: [(&str, Parser); 9] = [
    ("THCudaCheck FAIL", thcudacheck),
    ("untime error (", runtime_error),
    ("Test CUDA failure", nccl_tests),
    ("Cuda failure ", nccl),
    ("call to cu", nvhpc),
    ("(error code ", error_code),
    ("what():", cxx),
    ("CUDA error", pytorch),
    ("CUDA Error", pytorch),
];

/// Every wrapper found in `line`, in the order of [`WRAPPERS`] then of the line; names last.
pub fn find(line: &str) -> Vec<Wrapped<'_>> {
    let mut out = Vec::new();
    for (lit, parse) in WRAPPERS {
        for (at, _) in line.match_indices(lit) {
            // `untime error (` is found inside `cuda runtime error (` (any case of `cuda r`)
            let start = if lit == "untime error (" {
                at.checked_sub(6)
            } else {
                Some(at)
            };
            let Some(s) = start.filter(|&s| line.is_char_boundary(s)) else {
                continue;
            };
            if let Ok((_, w)) = parse(&line[s..]) {
                out.push(w);
            }
        }
    }
    for p in NAME_PREFIXES {
        for (at, _) in line.match_indices(p) {
            // PyTorch's `Search for `cudaErrorAssert' in https://docs.nvidia.com/...` under
            // its error line names the error again: the line above carries it
            let boundary = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
                && !line[..at].ends_with("Search for `");
            if let (true, Ok((_, w))) = (boundary, by_name(&line[at..])) {
                out.push(w);
            }
        }
    }
    out
}

/// The text an announcing line leaves to the next one: `'text'` (nccl-tests) or
/// `(NAME): text` (NVHPC), as a wrapper of the same kind.
pub fn next_line<'a>(first: &Wrapped<'a>, next: &'a str) -> Option<Wrapped<'a>> {
    let t = next.trim();
    if let Ok((_, text)) = quoted(t) {
        return Some(Wrapped {
            text: Some(text),
            text_on_next_line: false,
            ..*first
        });
    }
    let (_, named) = preceded(char('('), by_name)(t).ok()?;
    Some(Wrapped {
        name: named.name,
        text: named.text,
        text_on_next_line: false,
        ..*first
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_read_their_fields() {
        let w = find(
            "THCudaCheck FAIL file=/pytorch/THC/x.cu line=265 error=4 : unspecified launch failure",
        );
        assert_eq!((w[0].wrapper, w[0].number), ("thcudacheck", Some(4)));
        assert_eq!(w[0].text, Some("unspecified launch failure"));
        let w = find(
            "RuntimeError: cuda runtime error (710) : device-side assert triggered at /x.cu:1",
        );
        assert_eq!((w[0].wrapper, w[0].number), ("runtime_error", Some(710)));
        let w = find("   Test CUDA failure common.cu:1007");
        assert!(w[0].text_on_next_line && w[0].site == Some("common.cu:1007"));
        let n = next_line(
            &w[0],
            "   'CUDA-capable device(s) is/are busy or unavailable'",
        )
        .unwrap();
        assert_eq!(
            n.text,
            Some("CUDA-capable device(s) is/are busy or unavailable")
        );
        let w = find("x NCCL WARN Cuda failure 999 'unknown error");
        assert_eq!((w[0].number, w[0].text), (Some(999), Some("unknown error")));
        let w = find("Accelerator Fatal Error: call to cuCtxCreate returned error 214");
        assert_eq!((w[0].call, w[0].number), (Some("cuCtxCreate"), Some(214)));
        let n = next_line(
            &w[0],
            "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered",
        )
        .unwrap();
        assert_eq!(n.name, Some("CUDA_ERROR_ECC_UNCORRECTABLE"));
        let w = find("Failed to allocate device vector A (error code unknown error)!");
        // the text runs to the end of the line (texts hold parentheses); read by its beginning
        assert_eq!(w[0].text, Some("unknown error)!"));
        let w = find("cudaMalloc failed (error code 2)");
        assert_eq!((w[0].number, w[0].text), (Some(2), None));
        let w = find("  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized");
        assert_eq!(
            (w[0].site, w[0].text),
            (
                Some("gpu_burn-drv.cpp:298"),
                Some("system not yet initialized")
            )
        );
        let w = find("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered");
        assert_eq!(w[0].name, Some("cudaErrorIllegalAddress"));
    }

    #[test]
    fn near_misses_give_nothing() {
        assert!(find("ggml-cuda.cu:73: CUDA error").is_empty());
        assert!(find("Job exited with error code 137").is_empty());
        assert!(find("call to cuda_init() done").is_empty());
        assert!(find("MYcudaErrorX").is_empty());
        assert!(
            find("Search for `cudaErrorAssert' in https://docs.nvidia.com/cuda/x.html").is_empty()
        );
    }
}
