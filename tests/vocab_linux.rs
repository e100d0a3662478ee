//! Coverage of the Linux kernel's own wording: every row of `../shared/vocab/linux-kernel.tsv`
//! (hung task, lockups, RCU stalls, panics and WARNINGs, OOM killer, AER/DPC/hotplug, GHES/CPER,
//! MCE, mlx5 health) is rendered into a real-shaped dmesg line (runtime prefix, device prefix,
//! plausible values; `%s` of a report header also filled with every `table:NAME` value of its
//! file) and read by the recognizers. Per family the test prints how many rows yield a specific
//! kind, the generic kind, a line that a record reader takes into its report or record, or
//! nothing. It fails when a report header yields nothing specific, or when a family's rows that
//! yield something fall below the floor set here (raise floors, never lower them). Skipped, with a
//! message, when the vocabulary folder is absent.

use faultline::events::{cper, RecognizerSet, Record};
use faultline::formats::parse_head;
use faultline::scan::kreport;
use std::collections::BTreeMap;
use std::path::Path;

/// A family: its files (path prefixes), the format substrings of its report headers, the value
/// a header's `%s` takes (and whether the file's `table:NAME` values fill it too), and the floor
/// of rows (of those at error level or above) that must yield something.
struct Family {
    name: &'static str,
    files: &'static [&'static str],
    headers: &'static [&'static str],
    s_value: &'static str,
    tables: bool,
    floor: usize,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "hung task",
        files: &["kernel/hung_task.c"],
        headers: &[
            "blocked%s for more than",
            "is blocked on a",
            "blocked on a semaphore",
            "blocked on an rw-semaphore",
        ],
        s_value: "python",
        tables: true,
        floor: 10,
    },
    Family {
        name: "lockup",
        files: &["kernel/watchdog"],
        headers: &[
            "soft lockup - CPU#",
            "Watchdog detected hard LOCKUP",
            "Hard LOCKUP",
        ],
        s_value: "python",
        tables: true,
        floor: 8,
    },
    Family {
        name: "rcu stall",
        files: &["kernel/rcu/"],
        headers: &[
            "detected stalls on CPUs/tasks",
            "self-detected stall on CPU",
            "detected stall, but suppressed",
        ],
        s_value: "rcu_preempt",
        tables: false,
        floor: 22,
    },
    Family {
        name: "panic/warn",
        files: &["kernel/panic.c"],
        headers: &[
            "WARNING: %s:%d at",
            "WARNING: at %pS",
            "Kernel panic - not syncing: %s\\n",
        ],
        s_value: "python",
        tables: true,
        floor: 10,
    },
    Family {
        name: "oom",
        files: &["mm/oom_kill.c"],
        headers: &["Killed process %d"],
        s_value: "python",
        tables: true,
        floor: 3,
    },
    Family {
        name: "mce",
        files: &["arch/x86/kernel/cpu/mce/"],
        headers: &["Machine Check%s: %Lx Bank", "Machine check: %s"],
        s_value: "python",
        tables: true,
        floor: 22,
    },
    Family {
        name: "ghes/cper",
        files: &["drivers/acpi/apei/", "drivers/firmware/efi/cper"],
        headers: &["Hardware error from APEI Generic Hardware Error Source"],
        s_value: "python",
        tables: true,
        floor: 81,
    },
    Family {
        name: "aer/dpc",
        files: &["drivers/pci/pcie/"],
        headers: &["containment event"],
        s_value: "python",
        tables: true,
        floor: 5,
    },
    Family {
        name: "hotplug",
        files: &["drivers/pci/hotplug/"],
        headers: &[],
        s_value: "python",
        tables: true,
        floor: 0,
    },
    Family {
        name: "mlx5",
        files: &[
            "drivers/net/ethernet/mellanox/",
            "drivers/infiniband/hw/mlx5/",
        ],
        headers: &[],
        s_value: "python",
        tables: true,
        floor: 0,
    },
];

/// One row of the table.
struct Row {
    file: String,
    level: String,
    format: String,
    macro_: String,
    prefix: String,
}

fn rows(text: &str) -> (Vec<Row>, BTreeMap<String, Vec<String>>) {
    let mut rows = Vec::new();
    let mut tables: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in text.lines().skip(2) {
        let c: Vec<&str> = l.split('\t').collect();
        if c.len() < 7 {
            continue;
        }
        if c[2].starts_with("table:") {
            tables
                .entry(c[0].to_string())
                .or_default()
                .push(c[3].trim().to_string());
            continue;
        }
        rows.push(Row {
            file: c[0].into(),
            level: c[2].into(),
            format: c[3].into(),
            macro_: c[4].into(),
            prefix: c[6].into(),
        });
    }
    (rows, tables)
}

/// Error level and above (what a healthy machine does not print), and the record lines printed
/// at the level of their record (`dynamic`).
fn is_error_level(level: &str) -> bool {
    ["emerg", "alert", "crit", "err", "dynamic"]
        .iter()
        .any(|l| level.starts_with(l))
}

/// Fills one printf conversion.
fn value(conv: &str, s_value: &str) -> String {
    let last = conv.chars().last().unwrap_or('d');
    match last {
        'd' | 'i' | 'u' => "3".into(),
        'x' | 'X' => "1f".into(),
        'c' => "D".into(),
        'f' => "1.5".into(),
        's' if conv.contains(".*") => "5.15.0".into(),
        // `blocked%s for`: a piece glued to a word is an optional suffix, empty by default
        's' if s_value.is_empty() => String::new(),
        's' => s_value.into(),
        '%' => "%".into(),
        _ => "0".into(),
    }
}

/// Renders a format: C escapes undone, conversions filled (`%pS` as a frame of the nvidia module,
/// `%pUl` as a UUID), the first line only.
fn render_format(fmt: &str, s_value: &str) -> String {
    let fmt = fmt.replace("\\t", "\t").replace("\\\"", "\"");
    let fmt = fmt
        .split("\\n")
        .find(|p| !p.trim().is_empty())
        .unwrap_or("");
    let b = fmt.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let ch = fmt[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len() && b"-#0 +.*0123456789".contains(&b[i]) {
            i += 1;
        }
        while i < b.len() && b"hlLzjt".contains(&b[i]) {
            i += 1;
        }
        if i < b.len() && b[i] == b'p' {
            i += 1;
            let ext_start = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            out.push_str(match &fmt[ext_start..i] {
                "S" | "B" | "s" => "nv_drm_atomic_commit+0x1a/0x40 [nvidia_drm]",
                x if x.starts_with('U') => "b3b1c2d4-1111-2222-3333-444455556666",
                "e" => "-EIO",
                x if x.starts_with('G') => "GFP_KERNEL",
                "bl" => "0-3",
                _ => "0xffffffffc0a1b2c3",
            });
            continue;
        }
        if i < b.len() {
            i += 1;
        }
        let glued = out
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric());
        let v = if glued { "" } else { s_value };
        out.push_str(&value(&fmt[start..i.min(fmt.len())], v));
    }
    out
}

/// The whole line as dmesg shows it.
fn render(row: &Row, s_value: &str) -> String {
    let mut fmt = row.format.clone();
    let mut lead = String::new();
    if row.macro_ == "panic" || row.macro_ == "nmi_panic" || row.level.contains("mce_panic") {
        lead.push_str("Kernel panic - not syncing: ");
    }
    if row.level.starts_with("dynamic(%s prefix") {
        // cper/ghes print a prefix first: the record tag of a GHES record
        fmt = fmt.replacen("%s", "{1}[Hardware Error]: ", 1);
    }
    let device = if row.file.contains("mellanox") || row.file.contains("mlx5") {
        "mlx5_core 0000:5c:00.0"
    } else {
        "pcieport 0000:00:01.0"
    };
    let prefix = row
        .prefix
        .replace("<driver> <device>", device)
        .replace("%s:%d:(pid %d)", "mlx5_health_try_recover:123:(pid 7)");
    format!(
        "[  100.123456] {prefix}{lead}{}",
        render_format(&fmt, s_value)
    )
}

#[derive(Debug, PartialEq, Eq, Clone, Copy, PartialOrd, Ord)]
enum Yield {
    Specific,
    Generic,
    Record,
    Nothing,
}

/// What the recognizers make of one line.
fn read(set: &RecognizerSet, line: &str) -> (Yield, Vec<String>) {
    let head = parse_head(line.as_bytes());
    let body = faultline::scan::normalize_body(&line[head.msg_start.min(line.len())..]);
    let rec = Record {
        full: line,
        body: &body,
        preceding: &[],
        following: &[],
        rank: None,
    };
    let owners = set.owners_in(line);
    let mut drafts = Vec::new();
    if set.prefilter.find(line).is_some() {
        for o in owners {
            set.apply(o, &rec, &mut drafts);
        }
    }
    let kinds: Vec<String> = drafts
        .iter()
        .filter(|d| d.attach_to().is_none())
        .map(|d| d.kind.to_string())
        .collect();
    let y = if kinds.iter().any(|k| k != "driver_error") {
        Yield::Specific
    } else if !kinds.is_empty() {
        Yield::Generic
    } else if kreport::is_report_line(&body) || cper::is_record_line(&body) {
        Yield::Record
    } else {
        Yield::Nothing
    };
    (y, kinds)
}

#[test]
fn kernel_report_headers_and_families_reach_their_floors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab/linux-kernel.tsv");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "vocab_linux: {} is absent: kernel vocabulary coverage not measured",
            path.display()
        );
        return;
    };
    let set = RecognizerSet::load(&[]).expect("builtin recognizers");
    let (rows, tables) = rows(&text);
    let mut failures = Vec::new();
    eprintln!(
        "{:<12} {:>5} {:>9} {:>8} {:>7} {:>8} {:>8}",
        "family", "rows", "specific", "generic", "record", "nothing", "headers"
    );
    for fam in FAMILIES {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| fam.files.iter().any(|f| r.file.starts_with(f)))
            .filter(|r| {
                is_error_level(&r.level) || fam.headers.iter().any(|h| r.format.contains(h))
            })
            .collect();
        let mut counts: BTreeMap<Yield, usize> = BTreeMap::new();
        let mut headers = 0;
        for r in &mine {
            let (y, _) = read(&set, &render(r, fam.s_value));
            *counts.entry(y).or_default() += 1;
            if !fam.headers.iter().any(|h| r.format.contains(h)) {
                continue;
            }
            headers += 1;
            let mut values = vec![fam.s_value.to_string()];
            if fam.tables && r.format.contains("%s") {
                for f in fam.files {
                    for (file, vals) in &tables {
                        if file.starts_with(f) {
                            values.extend(vals.iter().cloned());
                        }
                    }
                }
            }
            for v in values {
                let line = render(r, &v);
                if read(&set, &line).0 != Yield::Specific {
                    failures.push(format!(
                        "{}: header gives no specific kind: {line}",
                        fam.name
                    ));
                }
            }
        }
        let got = |y| counts.get(&y).copied().unwrap_or(0);
        let something = mine.len() - got(Yield::Nothing);
        eprintln!(
            "{:<12} {:>5} {:>9} {:>8} {:>7} {:>8} {:>8}",
            fam.name,
            mine.len(),
            got(Yield::Specific),
            got(Yield::Generic),
            got(Yield::Record),
            got(Yield::Nothing),
            headers
        );
        if something < fam.floor {
            failures.push(format!(
                "{}: {something} rows yield something, below the floor {}",
                fam.name, fam.floor
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
