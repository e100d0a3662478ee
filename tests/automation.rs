//! The habits of automation and reference use: `explain` as a reference of the catalog (every
//! form, JSON, ranges of unknown codes, a closed stdout), strict exits (`--fail-on any`, no
//! recognizable input, `merge --expect`), capped warnings, tagged timeline JSON, and the
//! OpenMetrics output of `scan`.

mod common;
use common::*;
use std::process::{Command, Stdio};

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn explain_lists_families_codes_and_explains_every_form() {
    let fams = ok(&["explain"]);
    for f in ["xid", "sxid", "dcgm", "kind", "layer"] {
        assert!(fams.contains(&format!("  {f} ")), "{fams}");
    }
    // every catalog code, one line each
    let catalog = faultline::catalog::Catalog::builtin();
    let xids = ok(&["explain", "xid"]);
    assert_eq!(xids.lines().count(), catalog.xid.len());
    assert!(xids
        .lines()
        .any(|l| l.trim_start().starts_with("79 ") && l.contains("fallen off the bus")));
    let sxids = ok(&["explain", "sxid"]);
    assert_eq!(sxids.lines().count(), catalog.sxid.len());
    // one entry, many spellings
    let xid79 = ok(&["explain", "xid", "79"]);
    for form in [
        vec!["79"],
        vec!["xid79"],
        vec!["Xid 79"],
        vec!["XID", "79"],
        vec!["Xid", "79"],
    ] {
        let mut a = vec!["explain"];
        a.extend(form.iter());
        assert_eq!(ok(&a), xid79, "{form:?}");
    }
    assert!(ok(&["explain", "sxid", "20034"]).starts_with("SXid 20034"));
    assert!(ok(&["explain", "sxid20034"]).starts_with("SXid 20034"));
    let (name, d) = catalog.dcgm.iter().next().unwrap();
    let t = ok(&["explain", "dcgm", name]);
    assert!(t.starts_with(name.as_str()) && t.contains(&d.title), "{t}");
    assert_eq!(ok(&["explain", &name.to_lowercase()]), t);
    assert!(ok(&["explain", "kind", "hung_task"]).starts_with("hung_task — "));
    let l = ok(&["explain", "layer", "interconnect"]);
    assert!(
        l.starts_with("interconnect — ") && l.contains("Xid codes: 74"),
        "{l}"
    );
    assert_eq!(ok(&["explain", "layer", "INTERCONNECT"]), l);
}

#[test]
fn explain_json_carries_a_schema_and_the_entry() {
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["explain", "xid", "--format", "json"])).unwrap();
    assert_eq!(v["schema"], "faultline/explain/v1");
    assert_eq!(v["family"], "xid");
    let n = faultline::catalog::Catalog::builtin().xid.len();
    assert_eq!(v["entries"].as_array().unwrap().len(), n);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["explain", "--format", "json", "Xid 79"])).unwrap();
    assert_eq!(v["entry"]["code"], 79);
    assert_eq!(v["entry"]["layer"], "hardware");
    let v: serde_json::Value = serde_json::from_str(&ok(&["explain", "--format", "json"])).unwrap();
    assert_eq!(v["families"].as_array().unwrap().len(), 5);
}

#[test]
fn an_unknown_code_says_what_is_known_about_its_range() {
    let catalog = faultline::catalog::Catalog::builtin();
    // a gap inside NVIDIA's numbering, past the edition, an NVSwitch family, nothing at all
    let gap = (1..173).find(|c| !catalog.xid.contains_key(c)).unwrap();
    for (args, expect) in [
        (
            vec!["explain".to_string(), gap.to_string()],
            "NVIDIA's Xid catalog numbers its codes 1 to 173",
        ),
        (
            vec!["explain".into(), "xid".into(), "175".into()],
            "newer driver",
        ),
        (
            vec!["explain".into(), "sxid".into(), "20099".into()],
            "NVLink data-link errors",
        ),
        (
            vec!["explain".into(), "xid".into(), "99999".into()],
            "no range of known Xid codes",
        ),
        (
            vec!["explain".into(), "no_such_kind".into()],
            "not a kind, a family or a layer",
        ),
        (
            vec!["explain".into(), "layer".into(), "gpu".into()],
            "one of hardware",
        ),
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn explain_into_a_closed_pipe_does_not_panic() {
    let bin = env!("CARGO_BIN_EXE_faultline");
    for args in ["explain", "explain xid", "explain sxid --format json"] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("'{bin}' {args} | head -1"))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    }
}
