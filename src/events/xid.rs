//! NVIDIA driver lines: `NVRM: Xid (…): code, …` and NVSwitch `SXid (…): code, …`, parsed with nom.

use super::Draft;
use crate::ids::normalize_bdf;
use nom::{
    branch::alt,
    bytes::complete::{tag, take_till, take_while1},
    character::complete::{char, digit1, space0},
    combinator::{map_res, opt},
    sequence::{delimited, preceded},
    IResult,
};

/// The fields of an Xid line.
#[derive(Debug, PartialEq, Eq)]
pub struct XidLine<'a> {
    /// PCI address as printed.
    pub pci: &'a str,
    /// Xid code.
    pub code: i64,
    /// Channel owner pid, when printed and known.
    pub pid: Option<&'a str>,
    /// Process name, when printed and known.
    pub name: Option<&'a str>,
    /// Text after the pid/name fields.
    pub text: &'a str,
}

fn pci_block(i: &str) -> IResult<&str, &str> {
    delimited(
        char('('),
        preceded(
            opt(tag("PCI:")),
            take_while1(|c: char| c.is_ascii_hexdigit() || c == ':' || c == '.'),
        ),
        preceded(take_till(|c| c == ')'), char(')')),
    )(i)
}

fn field<'a>(name: &'static str) -> impl FnMut(&'a str) -> IResult<&'a str, &'a str> {
    move |i| {
        let (i, _) = preceded(space0, tag(name))(i)?;
        let (i, v) = take_till(|c| c == ',')(i)?;
        let (i, _) = opt(char(','))(i)?;
        Ok((i, v.trim()))
    }
}

/// Parses the message part of an Xid line (from `NVRM: Xid`).
pub fn parse_xid<'a>(i: &'a str) -> IResult<&'a str, XidLine<'a>> {
    let (i, _) = tag("NVRM: Xid ")(i)?;
    let (i, pci) = pci_block(i)?;
    let (i, _) = preceded(char(':'), space0)(i)?;
    let (i, code) = map_res(digit1, str::parse::<i64>)(i)?;
    let (i, _) = opt(char(','))(i)?;
    let (i, pid) = opt(field("pid="))(i)?;
    let (i, name) = opt(field("name="))(i)?;
    let known = |v: Option<&'a str>| v.filter(|s| !s.is_empty() && !s.contains("<unknown>"));
    Ok((
        "",
        XidLine {
            pci,
            code,
            pid: known(pid),
            name: known(name),
            text: i.trim(),
        },
    ))
}

/// Fields of an SXid line.
#[derive(Debug, PartialEq, Eq)]
pub struct SxidLine<'a> {
    /// Switch device name, e.g. `nvswitch3`.
    pub switch: &'a str,
    /// PCI address of the switch.
    pub pci: &'a str,
    /// SXid code.
    pub code: i64,
    /// Text after the code.
    pub text: &'a str,
}

/// Parses `nvidia-nvswitchN: SXid (PCI:…): 20034, …` (anchored anywhere in the message).
pub fn parse_sxid(i: &str) -> IResult<&str, SxidLine<'_>> {
    let (i, _) = take_till(|c| c == 'n')(i)?;
    let (i, _) = tag("nvidia-")(i)?;
    let (i, switch) = take_till(|c| c == ':')(i)?;
    let (i, _) = tag(": SXid ")(i)?;
    let (i, pci) = pci_block(i)?;
    let (i, _) = preceded(char(':'), space0)(i)?;
    let (i, code) = map_res(digit1, str::parse::<i64>)(i)?;
    let (i, _) = opt(alt((tag(", "), tag(","))))(i)?;
    Ok((
        "",
        SxidLine {
            switch,
            pci,
            code,
            text: i.trim(),
        },
    ))
}

fn attr(d: &mut Draft, k: &str, v: impl Into<String>) {
    d.attrs.insert(k, v.into());
}

/// Turns an Xid line into drafts: the `xid` event plus kinds derived from its code.
pub fn xid_drafts(
    body: &str,
    derived: &std::collections::BTreeMap<i64, Vec<String>>,
    out: &mut Vec<Draft>,
) -> bool {
    let Some(start) = body.find("NVRM: Xid") else {
        return false;
    };
    let Ok((_, x)) = parse_xid(&body[start..]) else {
        return false;
    };
    let mut d = Draft::new("xid");
    d.code = Some(x.code);
    d.gpu = normalize_bdf(x.pci).map(Into::into);
    // the details gathered first and made at once (one block, see `Attrs`)
    let mut a: Vec<(&str, &str)> = Vec::with_capacity(8);
    if let Some(p) = x.pid {
        a.push(("pid", p.trim_matches('\'')));
    }
    if let Some(n) = x.name {
        a.push(("process", n));
    }
    a.push(("text", x.text));
    if let Some(gpc) = between(x.text, "(GPC ", ",") {
        a.push(("gpc", gpc));
        if let Some(tpc) = between(x.text, "TPC ", ",").or_else(|| between(x.text, "TPC ", ")")) {
            a.push(("tpc", tpc));
        }
    }
    if let Some(link) = between(x.text, "link ", "(").or_else(|| between(x.text, "Link ", " ")) {
        a.push(("link", link.trim()));
    }
    // `Ch 00000001 caused by previous Xid 149`: the Xid this one follows from
    let caused_by = x.text.find("caused by previous Xid ").map(|p| {
        let digits = x.text[p + 23..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        &x.text[p + 23..p + 23 + digits]
    });
    if let Some(n) = caused_by.filter(|n| !n.is_empty()) {
        a.push(("caused_by_xid", n));
    }
    if let Some(action) = x.text.split(" to ").nth(1).filter(|_| x.code == 154) {
        a.push(("recovery_action", action.trim().trim_end_matches('.')));
    }
    if x.code == 74 || (144..=150).contains(&x.code) {
        let fatal = x.text.contains("fatal") || x.text.contains("Fatal");
        a.push(("fatal", if fatal { "true" } else { "false" }));
    }
    d.attrs = a.into_iter().collect();
    let gpu = d.gpu.clone();
    let attrs = d.attrs.clone();
    out.push(d);
    if let Some(kinds) = derived.get(&x.code) {
        for k in kinds {
            let mut e = Draft::new(k);
            e.gpu = gpu.clone();
            e.code = Some(x.code);
            e.attrs = attrs.clone();
            e.derived = true;
            out.push(e);
        }
    }
    true
}

/// Turns an SXid line into drafts. Continuation lines (`Severity …`, `Data {…}`) give no event.
pub fn sxid_drafts(body: &str, out: &mut Vec<Draft>) -> bool {
    let Ok((_, s)) = parse_sxid(body) else {
        return false;
    };
    let t = s.text;
    if t.starts_with("Severity") || t.starts_with("Data") {
        return true;
    }
    let mut d = Draft::new("sxid");
    d.code = Some(s.code);
    d.gpu = normalize_bdf(s.pci).map(Into::into);
    attr(&mut d, "switch", s.switch);
    let fatality = if t.starts_with("Non-fatal") || t.starts_with("Non-Fatal") {
        "non_fatal"
    } else if t.starts_with("Fatal") {
        "fatal"
    } else {
        ""
    };
    if !fatality.is_empty() {
        attr(&mut d, "fatality", fatality);
    }
    if let Some(link) = between(t, "Link ", " ") {
        attr(&mut d, "link", link);
    }
    attr(&mut d, "text", t);
    let thermal = s.code == 10004 || s.code == 10005;
    let mut nv = Draft::new(if thermal {
        "gpu_thermal"
    } else {
        "nvlink_error"
    });
    nv.gpu = d.gpu.clone();
    nv.code = Some(s.code);
    nv.attrs = d.attrs.clone();
    nv.derived = true;
    if fatality == "non_fatal" {
        nv.severity = Some(crate::model::Severity::Warning);
    }
    out.push(d);
    out.push(nv);
    true
}

/// The text between `a` and the next `b`.
pub fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let rest = &s[i..];
    let j = rest.find(b).unwrap_or(rest.len());
    let v = rest[..j].trim();
    (!v.is_empty() && v.len() < 64).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid_variants() {
        let (_, x) = parse_xid("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.").unwrap();
        assert_eq!(
            (x.pci, x.code, x.pid, x.name, x.text),
            ("0000:3b:00", 79, None, None, "GPU has fallen off the bus.")
        );
        let (_, x) =
            parse_xid("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row").unwrap();
        assert_eq!(
            (x.code, x.pid, x.text),
            (63, Some("1896"), "Row Remapper: New row")
        );
        let (_, x) = parse_xid("NVRM: Xid (0000:03:00): 14, Channel 00000001").unwrap();
        assert_eq!(
            (x.pci, x.code, x.text),
            ("0000:03:00", 14, "Channel 00000001")
        );
        let (_, x) = parse_xid(
            "NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:02): 13, pid=5, name=python, Graphics",
        )
        .unwrap();
        assert_eq!(
            (x.pci, x.name, x.text),
            ("0000:3b:00", Some("python"), "Graphics")
        );
        let (_, x) =
            parse_xid("NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.").unwrap();
        assert_eq!((x.pid, x.text), (None, "GPU has fallen off the bus."));
        assert!(parse_xid("NVRM: Xid (PCI:0000:02:00): abc").is_err());
    }

    #[test]
    fn xid_45_names_the_xid_it_follows() {
        let mut out = vec![];
        assert!(xid_drafts(
            "NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
            &Default::default(),
            &mut out
        ));
        assert_eq!(out[0].attrs.get("caused_by_xid"), Some("149"));
    }

    #[test]
    fn sxid_lines() {
        let (_, s) = parse_sxid(
            "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 LTSSM Fault Up",
        )
        .unwrap();
        assert_eq!(
            (s.switch, s.pci, s.code, s.text),
            (
                "nvswitch0",
                "0000:05:00.0",
                20034,
                "Fatal, Link 63 LTSSM Fault Up"
            )
        );
        let mut out = vec![];
        assert!(sxid_drafts(
            "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 Engine instance 60",
            &mut out
        ));
        assert!(out.is_empty());
    }
}
