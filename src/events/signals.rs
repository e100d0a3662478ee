//! POSIX signals as launchers and shells report them, decoded with the `[[signal]]` table of
//! data/jobs.toml: a `process_exit` that names a signal (a number, `SIGKILL`,
//! `Signals.SIGKILL`, `<Signals.SIGKILL: 9>`, or glibc's `strsignal` text such as `Killed`),
//! or whose code is a negative exit code (`-9`: Python's `returncode`) or a shell's 128+N
//! status (`137`), gets `signal` (the name), `signal_number` and the signal's meaning.

use super::Draft;
use serde::Deserialize;

/// One signal.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    /// Its number on Linux (x86-64 and arm64 share these).
    pub number: i64,
    /// Its name (`SIGKILL`).
    pub name: String,
    /// glibc's `strsignal` text, which shells, Slurm and MPI print (`Killed`).
    pub text: String,
    /// What it usually means for a job's process that dies of it.
    pub meaning: String,
}

/// The signal a detail names: a number, a name with or without `SIG` or Python's `Signals.`,
/// Python's `<Signals.SIGKILL: 9>`, or the `strsignal` text (case and a trailing
/// ` (core dumped)` aside).
pub fn parse<'t>(table: &'t [Signal], text: &str) -> Option<&'t Signal> {
    let t = text
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim_end_matches(" (core dumped)")
        .trim();
    let t = t.strip_prefix("Signals.").unwrap_or(t);
    // `SIGKILL: 9` (Python's repr of a Signals member): the name decides
    let t = t.split(':').next().unwrap_or(t).trim();
    if let Ok(n) = t.parse::<i64>() {
        return by_number(table, n);
    }
    let bare = t.strip_prefix("SIG").unwrap_or(t);
    table.iter().rev().find(|s| {
        s.name[3..].eq_ignore_ascii_case(bare) || (t.len() > 3 && s.text.eq_ignore_ascii_case(t))
    })
}

/// The signal with this number (the last table entry wins).
pub fn by_number(table: &[Signal], n: i64) -> Option<&Signal> {
    table.iter().rev().find(|s| s.number == n)
}

/// The signal an exit code stands for: `-N` (a parent's `returncode`, torchelastic's
/// `exitcode`), or `128+N` (a shell's or a container runtime's exit status).
pub fn from_code(table: &[Signal], code: i64) -> Option<&Signal> {
    match code {
        -64..=-1 => by_number(table, -code),
        129..=192 => by_number(table, code - 128),
        _ => None,
    }
}

/// Reads a `wait_status` detail (a `waitpid` status in hex, as srun prints it: `status=0x0100`)
/// into the exit code (bits 8-15) or the signal (bits 0-6, bit 7 a core dump) when the draft has
/// neither.
fn wait_status(d: &mut Draft) {
    let Some(v) = d.attrs.get("wait_status") else {
        return;
    };
    let hex = v.trim_start_matches("0x").trim_start_matches("0X");
    let Ok(status) = u32::from_str_radix(hex, 16) else {
        return;
    };
    let signal = status & 0x7f;
    if signal == 0 {
        if d.code.is_none() {
            d.code = Some(i64::from((status >> 8) & 0xff));
        }
    } else if !d.attrs.contains_key("signal") {
        d.attrs.insert("signal", signal.to_string());
        if status & 0x80 != 0 {
            d.attrs.insert("core_dumped", "true".to_string());
        }
    }
}

/// Adds `signal`, `signal_number` and `signal_meaning` to a `process_exit` draft; a draft that
/// reports its exit through a shell (`via = "shell"`) and has no code gets the shell's 128+N.
pub fn annotate(table: &[Signal], d: &mut Draft) {
    if d.kind != "process_exit" || table.is_empty() {
        return;
    }
    wait_status(d);
    let named = d.attrs.get("signal").and_then(|v| parse(table, v));
    let Some(s) = named.or_else(|| d.code.and_then(|c| from_code(table, c))) else {
        return;
    };
    if d.code.is_none() && d.attrs.get("via") == Some("shell") {
        d.code = Some(128 + s.number);
    }
    d.attrs.insert("signal", s.name.clone());
    d.attrs.insert("signal_number", s.number.to_string());
    d.attrs.insert_if_absent("signal_meaning", &s.meaning);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<Signal> {
        [
            (9, "SIGKILL", "Killed"),
            (11, "SIGSEGV", "Segmentation fault"),
        ]
        .iter()
        .map(|&(number, name, text)| Signal {
            number,
            name: name.into(),
            text: text.into(),
            meaning: String::new(),
        })
        .collect()
    }

    #[test]
    fn a_wait_status_names_the_code_or_the_signal() {
        let t = table();
        for (status, code, signal) in [
            ("0x0100", Some(1), None),
            ("0x0009", None, Some("SIGKILL")),
            ("0x008b", None, Some("SIGSEGV")),
            ("0xzz", None, None),
        ] {
            let mut d = Draft::new("process_exit");
            d.attrs.insert("wait_status", status.to_string());
            annotate(&t, &mut d);
            assert_eq!(d.code, code, "{status}");
            assert_eq!(d.attrs.get("signal"), signal, "{status}");
            assert_eq!(d.attrs.contains_key("core_dumped"), status == "0x008b");
        }
    }

    #[test]
    fn every_spelling_names_the_signal() {
        let t = table();
        for s in [
            "9",
            "SIGKILL",
            "KILL",
            "Signals.SIGKILL",
            "<Signals.SIGKILL: 9>",
            "Killed",
        ] {
            assert_eq!(parse(&t, s).map(|x| x.number), Some(9), "{s}");
        }
        assert_eq!(
            parse(&t, "Segmentation fault (core dumped)").map(|x| x.number),
            Some(11)
        );
        assert!(parse(&t, "Terminated").is_none());
    }

    #[test]
    fn codes_name_signals_only_when_negative_or_above_128() {
        let t = table();
        assert_eq!(from_code(&t, -9).map(|x| x.number), Some(9));
        assert_eq!(from_code(&t, 137).map(|x| x.number), Some(9));
        assert_eq!(from_code(&t, 139).map(|x| x.number), Some(11));
        assert!(from_code(&t, 9).is_none());
        assert!(from_code(&t, 1).is_none());
    }
}
