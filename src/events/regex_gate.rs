//! The literals a regex's every match begins with and ends with, when there are few: the build
//! (`build.rs` includes this file) writes them beside each built-in regex, so that a record that
//! holds none of them skips the regex without compiling it. Compiling costs a hundred
//! microseconds or more per regex, and one NVRM line is a candidate of seven regex recognizers
//! (anchor `NVRM`) that its wording rules out at once. The literals are regex-syntax's prefix and
//! suffix extraction, which is sound: every match starts (ends) with one of them.
//!
//! This file uses nothing of the crate, so that the build script can include it.

use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};

/// At most this many literals per side: more would cost more to test than the regex's own
/// prefilter once it is compiled.
const MAX_LITERALS: usize = 16;

/// A set of literals, each as bytes.
pub type Literals = Vec<Vec<u8>>;

/// The prefix and the suffix literals of `src` (each empty when that side gives no usable set:
/// infinite, too large, or holding an empty literal), or `None` when `src` does not parse.
pub fn gate(src: &str) -> Option<(Literals, Literals)> {
    let hir = regex_syntax::Parser::new().parse(src).ok()?;
    let side = |kind: ExtractKind| usable(&Extractor::new().kind(kind).extract(&hir));
    Some((side(ExtractKind::Prefix), side(ExtractKind::Suffix)))
}

/// The literals of `seq` when they can gate a regex: finite, few, none empty.
fn usable(seq: &Seq) -> Literals {
    match seq.literals() {
        Some(lits)
            if !lits.is_empty()
                && lits.len() <= MAX_LITERALS
                && lits.iter().all(|l| !l.is_empty()) =>
        {
            lits.iter().map(|l| l.as_bytes().to_vec()).collect()
        }
        _ => Vec::new(),
    }
}
