//! The knowledge data: recognizer samples, catalog completeness, rules, user overrides.

use faultline::catalog::Catalog;
use faultline::events::RecognizerSet;
use faultline::Knowledge;

#[test]
fn every_recognizer_matches_its_samples_and_rejects_its_rejects() {
    let set = RecognizerSet::load(&[]).expect("built-in recognizers load");
    let failures = set.self_test();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(set.len() >= 50);
}

/// A user's `[[memo_detail]]` entry whose value decides a key (an Xid's code) is caught by the
/// self-test; one with a digit in its `after` is refused when loading.
#[test]
fn a_detail_value_that_decides_a_key_fails_the_self_test() {
    let xid = "Jan 12 00:00:00 gpu-node-01 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=13671, name=python3";
    let bad = format!("[[memo_detail]]\nafter = \"): \"\nsample = \"{xid}\"\n");
    let set = RecognizerSet::load(&[bad]).expect("loads");
    let failures = set.self_test();
    assert!(
        failures
            .iter()
            .any(|f| f.contains("memo_detail") && f.contains("change the keys")),
        "{failures:?}"
    );
    let digit = "[[memo_detail]]\nafter = \"mlx5_\"\nsample = \"x\"\n".to_string();
    assert!(RecognizerSet::load(&[digit]).is_err());
}

#[test]
fn catalog_covers_the_codes_and_kinds_of_the_contract() {
    let c = Catalog::builtin();
    for code in [
        13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 140, 144, 149,
        150, 154,
    ] {
        let x = c
            .xid
            .get(&code)
            .unwrap_or_else(|| panic!("Xid {code} missing"));
        assert!(
            !x.meaning.is_empty() && !x.actions.is_empty(),
            "Xid {code} lacks meaning or actions"
        );
        assert!(x.title.len() <= 60, "Xid {code} title too long");
    }
    assert!(c.xid[&45].sympathetic && c.xid[&154].sympathetic);
    for code in [74, 79, 95, 109, 119] {
        assert!(c.xid[&code].sticky, "Xid {code} should be sticky");
    }
    for code in [20034, 12028, 10004] {
        assert!(c.sxid.contains_key(&code), "SXid {code} missing");
    }
    for k in CONTRACT_KINDS.split(' ') {
        assert!(c.kind.contains_key(k), "kind {k} missing from the catalog");
    }
}

/// The event kinds of `../shared/CONTRACT.md`.
const CONTRACT_KINDS: &str = "xid sxid ecc_sbe ecc_dbe row_remap retired_page pcie_aer pcie_link_degraded fell_off_bus nvlink_error gpu_thermal gpu_power gsp_timeout driver_mismatch driver_load cuda_oom host_oom cuda_error segfault hung_task mce nccl_timeout nccl_error ib_link process_exit preemption checkpoint_saved throughput_drop";

#[test]
fn readme_lists_every_kind_beyond_the_contract() {
    // the event kinds are listed in the JSON reference (docs/json.md), which README links
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md")).unwrap();
    let start = readme
        .find("## Event kinds")
        .expect("a docs/json.md section on event kinds");
    let end = readme[start + 3..]
        .find("\n## ")
        .map_or(readme.len(), |e| start + 3 + e);
    let section = &readme[start..end];
    let listed: Vec<&str> = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    let c = Catalog::builtin();
    // `progress` samples feed the throughput series and never reach the timeline
    for k in c.kind.keys() {
        if !CONTRACT_KINDS.split(' ').any(|x| x == k) && k != "progress" {
            assert!(
                listed.contains(&k.as_str()),
                "README's event kinds lack `{k}`"
            );
        }
    }
    for k in listed {
        assert!(
            c.kind.contains_key(k),
            "README lists `{k}`, the catalog does not know it"
        );
    }
}

#[test]
fn user_files_add_recognizers_rules_and_catalog_entries() {
    let user = r#"
[[recognizer]]
id = "site-fan-alarm"
kind = "fan_fault"
anchors = ["FANALARM"]
regex = 'FANALARM slot (?P<slot>\d+)'
samples = ["FANALARM slot 3"]

[[xid]]
code = 999
mnemonic = "SITE_TEST"
title = "Site test code"
meaning = "A code only this site uses."
layer = "platform"
severity = "warning"
immediate = ""
investigatory = ""
legacy_causes = []
sympathetic = false
sticky = false
responsibility = "operator"
other_tools = ""
actions = ["Ask the site team"]
"#;
    let k = Knowledge::load(&[user.to_string()]).expect("user file loads");
    assert!(k.recognizers.self_test().is_empty());
    assert_eq!(k.catalog.xid[&999].title, "Site test code");
    assert!(Knowledge::load(&["[bogus]\nx = 1\n".to_string()]).is_err());
}

#[test]
fn explain_knows_codes_and_kinds() {
    let c = Catalog::builtin();
    let t = faultline::explain::explain(&c, "xid", Some("79")).unwrap();
    assert!(
        t.contains("fallen off the bus") || t.contains("fell off the bus"),
        "{t}"
    );
    assert!(t.contains("RESTART_BM"), "{t}");
    assert!(faultline::explain::explain(&c, "sxid", Some("20034")).is_some());
    assert!(faultline::explain::explain(&c, "kind", Some("nccl_timeout")).is_some());
    assert!(faultline::explain::explain(&c, "xid", Some("123456")).is_none());
}
