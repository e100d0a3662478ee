//! Readers, one per kind of input: each turns an input's bytes into what it contributes, a
//! [`ScanOutput`] of located drafts and, for a block format, the events and inventory it parses
//! ([`Parsed`]). [`crate::pipeline::process`] opens the input ([`open`]: its bytes whole, or a
//! stream read block by block), picks its reader once ([`Reader::pick`]), and then runs the steps
//! every input shares (classification, the events cap, the host).
//!
//! To add a format: teach [`crate::formats::detect`] to name it, write its reader as a function
//! `fn read(buf: &[u8], ctx: &Ctx) -> Parsed` in a file of this folder, and give it a variant of
//! [`Reader`] with its line in [`Reader::pick`] and [`Reader::read`].

mod bug_report;
mod collect;
mod dcgmi;
mod smi;
pub mod stream;
mod text;

use crate::catalog::Catalog;
use crate::events::RecognizerSet;
use crate::formats::{self, Format};
use crate::input::container::Stream;
use crate::input::{Bytes, Input, MAX_HELD_BYTES};
use crate::model::RawEvent;
use crate::scan::ScanOutput;
use std::collections::BTreeMap;

/// A GPU as an inventory source describes it.
#[derive(Clone, Debug, Default)]
pub struct GpuRecord {
    /// Host.
    pub host: Option<String>,
    /// Normalized bus id.
    pub bus_id: Option<String>,
    /// UUID.
    pub uuid: Option<String>,
    /// Board serial.
    pub serial: Option<String>,
    /// Product name.
    pub name: Option<String>,
    /// VBIOS version.
    pub vbios: Option<String>,
    /// Counters and state as read.
    pub state: BTreeMap<String, String>,
}

/// What every reader needs besides the bytes.
pub struct Ctx<'a> {
    /// The input's index in the analysis (for the events a block format builds).
    pub index: usize,
    /// Recognizers.
    pub set: &'a RecognizerSet,
    /// Catalog (layers of the events a block format builds).
    pub catalog: &'a Catalog,
    /// Scan large buffers on every core.
    pub parallel: bool,
    /// Events kept per host, kind, code, GPU and rank.
    pub cap: u64,
}

/// What a reader made of one input.
#[derive(Default)]
pub struct Parsed {
    /// The recognizers' output over its lines.
    pub out: ScanOutput,
    /// Events a block format built itself (already classified).
    pub extra: Vec<RawEvent>,
    /// Bug report metadata.
    pub bundle: Option<formats::bug_report::BundleInfo>,
    /// GPUs described by nvidia-smi dumps.
    pub gpus: Vec<GpuRecord>,
    /// Driver version from an nvidia-smi dump.
    pub smi_driver: Option<String>,
    /// CUDA version from an nvidia-smi dump.
    pub smi_cuda: Option<String>,
    /// The GPU/NIC matrix of `nvidia-smi topo -m`.
    pub topology: Option<formats::topo::Topology>,
    /// Bytes read.
    pub bytes: u64,
}

impl Parsed {
    /// The output of a scan of `bytes` bytes, nothing else.
    pub fn scanned(out: ScanOutput, bytes: u64) -> Parsed {
        Parsed {
            out,
            bytes,
            ..Parsed::default()
        }
    }
}

/// An input's bytes, as its reader gets them.
pub enum Body {
    /// All of them (mapped, read, or decoded, UTF-16 converted to UTF-8).
    Whole(Bytes),
    /// The first ones, and the stream of the rest.
    Streamed(Vec<u8>, Stream),
}

impl Body {
    /// Whether a mapped file shrank while it was read.
    pub fn shrunk(&self) -> bool {
        matches!(self, Body::Whole(b) if b.shrunk())
    }
}

/// The reader of one kind of input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// Lines of text (logs of every line format): recognizers only.
    Text,
    /// A large input read block by block ([`stream`]): recognizers only.
    Stream,
    /// `journalctl -o json`.
    JournalJson,
    /// `nvidia-smi topo -m`.
    Topology,
    /// `nvidia-smi -q` (text or XML).
    NvidiaSmi,
    /// `nvidia-smi nvlink -s` / `-e`.
    NvLink,
    /// The manifest of a `faultline collect` bundle.
    CollectManifest,
    /// `dcgmi diag` (table or JSON).
    Dcgmi,
    /// `nvidia-bug-report.log`.
    BugReport,
}

impl Reader {
    /// The reader for an input of `format` with bytes `body`.
    pub fn pick(format: Format, body: &Body) -> Reader {
        let Body::Whole(buf) = body else {
            return Reader::Stream;
        };
        if crate::collect::manifest::looks_like(buf) {
            return Reader::CollectManifest;
        }
        match format {
            Format::JournalJson => Reader::JournalJson,
            Format::NvidiaSmi if formats::topo::looks_like(buf) => Reader::Topology,
            Format::NvidiaSmi if formats::nvlink::looks_like(buf) => Reader::NvLink,
            Format::NvidiaSmi => Reader::NvidiaSmi,
            Format::Dcgmi => Reader::Dcgmi,
            Format::BugReport => Reader::BugReport,
            _ => Reader::Text,
        }
    }

    /// Reads `body`; what the reading itself met goes to `warnings`.
    pub fn read(self, body: &mut Body, ctx: &Ctx, warnings: &mut Vec<String>) -> Parsed {
        let buf: &[u8] = match body {
            Body::Streamed(head, stream) => {
                return stream::read(std::mem::take(head), stream, ctx, warnings)
            }
            Body::Whole(b) => b,
        };
        match self {
            Reader::Text | Reader::Stream => text::read(buf, ctx),
            Reader::JournalJson => text::journal_json(buf, ctx),
            Reader::Topology => smi::topology(buf, ctx),
            Reader::NvidiaSmi => smi::dump(buf, ctx),
            Reader::NvLink => smi::nvlink(buf, ctx),
            Reader::Dcgmi => dcgmi::read(buf, ctx),
            Reader::BugReport => bug_report::read(buf, ctx),
            Reader::CollectManifest => collect::read(buf, warnings),
        }
    }
}

/// Takes the bytes of `input` as its reader will read them, and names its format: a stream that
/// ends within [`MAX_HELD_BYTES`] and holds a block format (or UTF-16 text) is read whole, a
/// longer one stays a stream; whole bytes are decoded from UTF-16 and checked for binary content
/// (warnings go to `warnings`).
pub fn open(input: &mut Input, warnings: &mut Vec<String>) -> (Body, Format) {
    let mut bytes = std::mem::replace(&mut input.bytes, Bytes::Owned(Vec::new()));
    if let Some(stream) = input.stream.take() {
        let format = formats::detect(&bytes[..bytes.len().min(64 * 1024)]);
        match hold(bytes, stream, format, warnings) {
            Body::Whole(whole) => bytes = whole,
            streamed => return (streamed, format),
        }
    }
    let mut utf16 = false;
    if let Some((text, note)) = decode_utf16(&bytes) {
        warnings.push(note);
        bytes = Bytes::Owned(text);
        utf16 = true;
    }
    let head = &bytes[..bytes.len().min(64 * 1024)];
    oddities(head, utf16, warnings);
    let format = formats::detect(head);
    (Body::Whole(bytes), format)
}

/// A stream whose head names a block format (or UTF-16 text) is read whole up to the memory held
/// per input; any other, or one larger than that, stays a stream.
fn hold(bytes: Bytes, mut stream: Stream, format: Format, warnings: &mut Vec<String>) -> Body {
    let utf16 = bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]);
    let block = matches!(
        format,
        Format::BugReport | Format::NvidiaSmi | Format::Dcgmi | Format::JournalJson
    );
    if !(utf16 || block) {
        return Body::Streamed(bytes.into_vec(), stream);
    }
    let mut all = bytes.into_vec();
    let room = (MAX_HELD_BYTES as usize).saturating_sub(all.len());
    stream.fill(&mut all, room);
    if stream.is_done() {
        warnings.append(&mut stream.warnings);
        return Body::Whole(Bytes::Owned(all));
    }
    warnings.push(format!(
        "{} input larger than {MAX_HELD_BYTES} bytes held in memory: scanned line by line, not parsed as a block",
        format.as_str(),
    ));
    Body::Streamed(all, stream)
}

/// Warnings for binary content in the first bytes of a text input (the journal export format
/// carries binary fields by design).
fn oddities(head: &[u8], utf16: bool, warnings: &mut Vec<String>) {
    let export =
        formats::journal_entries::detect(head) == Some(formats::journal_entries::Mode::Export);
    if let Some(p) = memchr::memchr(0, head).filter(|_| !export) {
        let nuls = bytecount::count(head, 0);
        warnings.push(format!("binary content: NUL byte at offset {p} ({nuls} in the first {} bytes); scanned as text", head.len()));
    } else if let Err(e) = std::str::from_utf8(head).map_err(|e| e.valid_up_to()) {
        if !utf16 {
            warnings.push(format!("invalid UTF-8 at offset {e}; read as lossy text"));
        }
    }
}

/// Decodes text that starts with a UTF-16 byte-order mark; returns the UTF-8 text and a warning
/// that says which byte order was read (and where an odd trailing byte was dropped).
fn decode_utf16(b: &[u8]) -> Option<(Vec<u8>, String)> {
    let (le, body) = if b.starts_with(&[0xff, 0xfe]) {
        (true, &b[2..])
    } else if b.starts_with(&[0xfe, 0xff]) {
        (false, &b[2..])
    } else {
        return None;
    };
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|c| {
            if le {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        })
        .collect();
    let mut note = format!(
        "UTF-16 {} text (byte-order mark): decoded to UTF-8 before scanning",
        if le { "LE" } else { "BE" }
    );
    if body.len() % 2 == 1 {
        note.push_str(&format!(
            "; odd trailing byte at offset {} dropped",
            b.len() - 1
        ));
    }
    Some((String::from_utf16_lossy(&units).into_bytes(), note))
}
