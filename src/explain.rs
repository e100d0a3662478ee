//! `faultline explain`: a reference of what the catalog knows. `explain` alone lists the
//! families; `explain xid` lists every Xid code with its one-line meaning; `explain 79`,
//! `explain xid79`, `explain "Xid 79"`, `explain sxid 20034`, `explain dcgm DCGM_FR_…`,
//! `explain kind hung_task`, `explain layer interconnect` explain one entry, in text or JSON.
//! An unknown code gets what the catalog knows about its range.

use crate::catalog::{Catalog, KindEntry, SxidEntry, XidEntry};
use crate::model::{Layer, Severity};
use serde_json::{json, Value};
use std::fmt::Write;

/// The schema tag of `explain --format json`.
pub const SCHEMA: &str = "faultline/explain/v1";

/// The families `explain` knows.
pub const FAMILIES: [(&str, &str); 5] = [
    (
        "xid",
        "NVIDIA GPU driver error codes (`explain xid`, `explain 79`)",
    ),
    (
        "sxid",
        "NVSwitch error codes (`explain sxid`, `explain sxid 20034`)",
    ),
    (
        "dcgm",
        "DCGM diagnostic failure codes (`explain dcgm`, `explain dcgm DCGM_FR_XID_ERROR`)",
    ),
    (
        "kind",
        "event kinds of the timeline (`explain kind`, `explain kind hung_task`)",
    ),
    (
        "layer",
        "root-cause layers (`explain layer`, `explain layer interconnect`)",
    ),
];

/// What the user asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// The families.
    Families,
    /// Every entry of one family.
    List(&'static str),
    /// One Xid code.
    Xid(i64),
    /// One SXid code.
    Sxid(i64),
    /// One DCGM failure code name.
    Dcgm(String),
    /// One event kind.
    Kind(String),
    /// One layer.
    Layer(String),
}

fn family(word: &str) -> Option<&'static str> {
    let w = word.to_ascii_lowercase();
    FAMILIES
        .iter()
        .map(|(f, _)| *f)
        .find(|f| *f == w || (w.len() > f.len() && w.ends_with('s') && w[..w.len() - 1] == **f))
}

/// Reads the words after `explain`: `xid 79`, `xid79`, `Xid 79` (one word), `79`, `sxid 20034`,
/// `dcgm NAME`, `DCGM_FR_…`, `kind NAME`, `layer NAME`, a bare kind or layer name.
pub fn parse(words: &[String]) -> Result<Query, String> {
    let joined = words.join(" ");
    let mut toks: Vec<String> = joined.split_whitespace().map(str::to_string).collect();
    // `xid79`, `sxid20034`, `Xid:79`: the family and the code in one word
    if let Some(first) = toks.first().cloned() {
        let cut = first.find(|c: char| c.is_ascii_digit());
        if let Some(i) = cut.filter(|&i| i > 0) {
            let (f, code) = first.split_at(i);
            let f = f.trim_end_matches([':', '-', '#']);
            if family(f).is_some() && code.bytes().all(|b| b.is_ascii_digit()) {
                toks.splice(0..1, [f.to_string(), code.to_string()]);
            }
        }
    }
    let code_of = |s: &str| -> Result<i64, String> {
        s.trim_end_matches([',', '.'])
            .parse()
            .map_err(|_| format!("`{s}` is not a number"))
    };
    match toks.as_slice() {
        [] => Ok(Query::Families),
        [one] if one.bytes().all(|b| b.is_ascii_digit()) => Ok(Query::Xid(code_of(one)?)),
        [one] if one.to_ascii_uppercase().starts_with("DCGM_FR_") => {
            Ok(Query::Dcgm(one.to_ascii_uppercase()))
        }
        [one] => match family(one) {
            Some(f) => Ok(Query::List(f)),
            None => Ok(Query::Kind(one.clone())),
        },
        [f, code] => match family(f) {
            Some("xid") => Ok(Query::Xid(code_of(code)?)),
            Some("sxid") => Ok(Query::Sxid(code_of(code)?)),
            Some("dcgm") => Ok(Query::Dcgm(code.to_ascii_uppercase())),
            Some("kind") => Ok(Query::Kind(code.clone())),
            Some("layer") => Ok(Query::Layer(code.clone())),
            _ => Err(format!(
                "`{f}` is not a family: one of {}",
                FAMILIES.map(|f| f.0).join(", ")
            )),
        },
        _ => Err(format!("cannot read `{joined}`: e.g. `explain xid 79`")),
    }
}

/// What the catalog knows about a code it does not hold: the narrowest range around it.
pub fn range_note<'a>(catalog: &'a Catalog, family: &str, code: i64) -> Option<&'a str> {
    catalog
        .ranges
        .iter()
        .filter(|r| r.family == family && (r.from..=r.to).contains(&code))
        .min_by_key(|r| r.to - r.from)
        .map(|r| r.note.as_str())
}

/// Why a query found nothing: what the catalog knows about the range, or the names it knows.
fn unknown(catalog: &Catalog, q: &Query) -> String {
    match q {
        Query::Xid(c) | Query::Sxid(c) => {
            let f = if matches!(q, Query::Xid(_)) { "xid" } else { "sxid" };
            let name = if f == "xid" { "Xid" } else { "SXid" };
            match range_note(catalog, f, *c) {
                Some(n) => format!("{name} {c} is not in the catalog. {n}"),
                None => format!(
                    "{name} {c} is not in the catalog, and no range of known {name} codes holds it (`faultline explain {f}` lists the known codes)"
                ),
            }
        }
        Query::Dcgm(n) => format!(
            "{n} is not in the catalog (`faultline explain dcgm` lists the {} known DCGM codes)",
            catalog.dcgm.len()
        ),
        Query::Kind(k) => format!(
            "nothing known about `{k}`: not a kind, a family or a layer (`faultline explain` lists the families, `faultline explain kind` the kinds)"
        ),
        Query::Layer(l) => format!(
            "`{l}` is not a layer: one of {}",
            Layer::ALL.map(|l| l.as_str()).join(", ")
        ),
        Query::Families | Query::List(_) => String::new(),
    }
}

/// The text answer; Err says what is known when the catalog does not hold the entry.
pub fn text(catalog: &Catalog, q: &Query) -> Result<String, String> {
    let mut o = String::new();
    match q {
        Query::Families => {
            let _ = writeln!(
                o,
                "faultline explain FAMILY [CODE]: the families of the catalog"
            );
            for (f, what) in FAMILIES {
                let _ = writeln!(o, "  {f:<6} {:>4} entries  {what}", count(catalog, f));
            }
        }
        Query::List(f) => list_text(&mut o, catalog, f),
        Query::Layer(l) => {
            let layer = Layer::parse_loose(l).ok_or_else(|| unknown(catalog, q))?;
            layer_text(&mut o, catalog, layer);
        }
        Query::Kind(k) => {
            // a bare layer name (`explain interconnect`) when no kind has it
            match (catalog.kind.contains_key(k.as_str()), Layer::parse_loose(k)) {
                (false, Some(layer)) => layer_text(&mut o, catalog, layer),
                _ => {
                    return entry_text(catalog, "kind", Some(k)).ok_or_else(|| unknown(catalog, q))
                }
            }
        }
        Query::Xid(c) => {
            return entry_text(catalog, "xid", Some(&c.to_string()))
                .ok_or_else(|| unknown(catalog, q))
        }
        Query::Sxid(c) => {
            return entry_text(catalog, "sxid", Some(&c.to_string()))
                .ok_or_else(|| unknown(catalog, q))
        }
        Query::Dcgm(n) => {
            let d = catalog.dcgm.get(n).ok_or_else(|| unknown(catalog, q))?;
            let _ = writeln!(o, "{} — {}", d.code, d.title);
            let _ = writeln!(
                o,
                "kind: {}   layer: {}   severity: {}   DCGM action: {}",
                d.kind,
                d.layer.as_str(),
                d.severity.as_str(),
                d.action
            );
            for m in &d.messages {
                let _ = writeln!(o, "message: {m}");
            }
            if let Some(k) = catalog.kind.get(&d.kind) {
                let _ = writeln!(o, "{}", k.meaning);
                actions(&mut o, &k.actions);
            }
        }
    }
    Ok(o)
}

fn count(catalog: &Catalog, family: &str) -> usize {
    match family {
        "xid" => catalog.xid.len(),
        "sxid" => catalog.sxid.len(),
        "dcgm" => catalog.dcgm.len(),
        "kind" => catalog.kind.len(),
        _ => Layer::ALL.len(),
    }
}

fn list_text(o: &mut String, catalog: &Catalog, family: &str) {
    match family {
        "xid" => {
            for x in catalog.xid.values() {
                let _ = writeln!(o, "{:>5}  {:<15} {}", x.code, x.layer.as_str(), x.title);
            }
        }
        "sxid" => {
            for (c, x) in &catalog.sxid {
                let _ = writeln!(
                    o,
                    "{c:>6}  {:<15} {:<18} {}",
                    x.layer.as_str(),
                    x.fatality,
                    x.title
                );
            }
        }
        "dcgm" => {
            for d in catalog.dcgm.values() {
                let _ = writeln!(o, "{:<44} {:<15} {}", d.code, d.layer.as_str(), d.title);
            }
        }
        "kind" => {
            for k in catalog.kind.values() {
                let _ = writeln!(o, "{:<28} {:<15} {}", k.kind, k.layer.as_str(), k.title);
            }
        }
        _ => {
            for l in Layer::ALL {
                let title = catalog.layers.get(&l).map_or("", |e| e.title.as_str());
                let _ = writeln!(o, "{:<16} {title}", l.as_str());
            }
        }
    }
}

fn layer_text(o: &mut String, catalog: &Catalog, layer: Layer) {
    match catalog.layers.get(&layer) {
        Some(e) => {
            let _ = writeln!(o, "{} — {}", layer.as_str(), e.title);
            let _ = writeln!(o, "{}", e.meaning);
            let _ = writeln!(o, "who acts: {}", e.who_acts);
        }
        None => {
            let _ = writeln!(o, "{}", layer.as_str());
        }
    }
    let kinds: Vec<&str> = catalog
        .kind
        .values()
        .filter(|k| k.layer == layer)
        .map(|k| k.kind.as_str())
        .collect();
    if !kinds.is_empty() {
        let _ = writeln!(o, "kinds: {}", kinds.join(", "));
    }
    let xids: Vec<String> = catalog
        .xid
        .values()
        .filter(|x| x.layer == layer)
        .map(|x| x.code.to_string())
        .collect();
    if !xids.is_empty() {
        let _ = writeln!(o, "Xid codes: {}", xids.join(", "));
    }
}

/// The JSON answer (schema [`SCHEMA`]); Err as for [`text`].
pub fn to_json(catalog: &Catalog, q: &Query) -> Result<Value, String> {
    let v = match q {
        Query::Families => json!({
            "families": FAMILIES.iter().map(|(f, what)| json!({
                "family": f, "entries": count(catalog, f), "about": what,
            })).collect::<Vec<_>>(),
        }),
        Query::List(f) => json!({ "family": f, "entries": list_json(catalog, f) }),
        Query::Xid(c) => {
            let x = catalog.xid.get(c).ok_or_else(|| unknown(catalog, q))?;
            json!({ "family": "xid", "entry": x })
        }
        Query::Sxid(c) => {
            let x = catalog.sxid.get(c).ok_or_else(|| unknown(catalog, q))?;
            json!({ "family": "sxid", "code": c, "entry": x })
        }
        Query::Dcgm(n) => {
            let d = catalog.dcgm.get(n).ok_or_else(|| unknown(catalog, q))?;
            json!({ "family": "dcgm", "entry": d, "kind": catalog.kind.get(&d.kind) })
        }
        Query::Kind(k) => match (catalog.kind.get(k.as_str()), Layer::parse_loose(k)) {
            (Some(e), _) => json!({ "family": "kind", "entry": e }),
            (None, Some(l)) => layer_json(catalog, l),
            (None, None) => return Err(unknown(catalog, q)),
        },
        Query::Layer(l) => layer_json(
            catalog,
            Layer::parse_loose(l).ok_or_else(|| unknown(catalog, q))?,
        ),
    };
    let mut v = v;
    v["schema"] = json!(SCHEMA);
    Ok(v)
}

fn list_json(catalog: &Catalog, family: &str) -> Vec<Value> {
    match family {
        "xid" => catalog
            .xid
            .values()
            .map(|x| json!({"code": x.code, "title": x.title, "layer": x.layer, "severity": x.severity}))
            .collect(),
        "sxid" => catalog
            .sxid
            .iter()
            .map(|(c, x)| json!({"code": c, "title": x.title, "layer": x.layer, "fatality": x.fatality}))
            .collect(),
        "dcgm" => catalog
            .dcgm
            .values()
            .map(|d| json!({"code": d.code, "title": d.title, "layer": d.layer, "kind": d.kind}))
            .collect(),
        "kind" => catalog
            .kind
            .values()
            .map(|k| json!({"kind": k.kind, "title": k.title, "layer": k.layer}))
            .collect(),
        _ => Layer::ALL
            .iter()
            .map(|l| json!({"layer": l, "title": catalog.layers.get(l).map(|e| e.title.as_str())}))
            .collect(),
    }
}

fn layer_json(catalog: &Catalog, layer: Layer) -> Value {
    json!({
        "family": "layer",
        "entry": catalog.layers.get(&layer),
        "kinds": catalog.kind.values().filter(|k| k.layer == layer).map(|k| k.kind.as_str()).collect::<Vec<_>>(),
        "xid_codes": catalog.xid.values().filter(|x| x.layer == layer).map(|x| x.code).collect::<Vec<_>>(),
    })
}

/// Explains `xid N`, `sxid N`, `kind NAME` (or a bare kind name); None when unknown.
pub fn explain(catalog: &Catalog, what: &str, code: Option<&str>) -> Option<String> {
    entry_text(catalog, what, code)
}

/// One entry as text: `xid N`, `sxid N`, `kind NAME` (or a bare kind name); None when unknown.
fn entry_text(catalog: &Catalog, what: &str, code: Option<&str>) -> Option<String> {
    let mut o = String::new();
    match (what, code) {
        ("xid", Some(c)) => xid_text(&mut o, catalog.xid.get(&c.parse().ok()?)?),
        ("sxid", Some(c)) => {
            let n: i64 = c.parse().ok()?;
            sxid_text(&mut o, n, catalog.sxid.get(&n)?)
        }
        ("kind", Some(k)) | (k, None) => kind_text(&mut o, catalog.kind.get(k)?),
        _ => return None,
    }
    Some(o)
}

fn xid_text(o: &mut String, x: &XidEntry) {
    let _ = writeln!(o, "Xid {} — {} ({})", x.code, x.title, x.mnemonic);
    meaning_and_layer(o, &x.meaning, (x.layer, x.severity), &x.responsibility);
    let _ = writeln!(
        o,
        "NVIDIA resolution: immediate {} → investigatory {}",
        or_dash(&x.immediate),
        or_dash(&x.investigatory)
    );
    if !x.legacy_causes.is_empty() {
        let _ = writeln!(o, "legacy causes: {}", x.legacy_causes.join(", "));
    }
    let flags: Vec<&str> = [
        (x.sympathetic, "usually a consequence of another fault"),
        (x.sticky, "sticky: keeps an incident open longer"),
    ]
    .iter()
    .filter(|f| f.0)
    .map(|f| f.1)
    .collect();
    if !flags.is_empty() {
        let _ = writeln!(o, "{}", flags.join("; "));
    }
    if !x.other_tools.is_empty() {
        let _ = writeln!(o, "other tools: {}", x.other_tools);
    }
    actions(o, &x.actions);
}

fn sxid_text(o: &mut String, n: i64, x: &SxidEntry) {
    let _ = writeln!(o, "SXid {n} — {} ({})", x.title, x.name);
    let _ = writeln!(o, "{}", x.meaning);
    let _ = writeln!(
        o,
        "fatality: {}   layer: {}   severity: {}",
        x.fatality,
        x.layer.as_str(),
        x.severity.as_str()
    );
    if !x.other_tools.is_empty() {
        let _ = writeln!(o, "other tools: {}", x.other_tools);
    }
    actions(o, &x.actions);
}

fn kind_text(o: &mut String, x: &KindEntry) {
    let _ = writeln!(o, "{} — {}", x.kind, x.title);
    meaning_and_layer(o, &x.meaning, (x.layer, x.severity), &x.responsibility);
    actions(o, &x.actions);
}

/// An entry's meaning, then its layer, severity and who acts, on a line of their own.
fn meaning_and_layer(
    o: &mut String,
    meaning: &str,
    (layer, severity): (Layer, Severity),
    who: &str,
) {
    let _ = writeln!(o, "{meaning}");
    let _ = writeln!(
        o,
        "layer: {}   severity: {}   who acts: {who}",
        layer.as_str(),
        severity.as_str()
    );
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

fn actions(o: &mut String, a: &[String]) {
    if !a.is_empty() {
        let _ = writeln!(o, "what to do:");
        for x in a {
            let _ = writeln!(o, "  - {x}");
        }
    }
}
