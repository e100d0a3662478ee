//! Localized and odd timestamps: German and Japanese journal lines, `dmesg -H` minute stamps and
//! deltas, German `dmesg -T`. What can be read is read with an honest time quality; a line whose
//! stamp cannot be read still gives its event, without a time.

mod common;
use common::*;
use serde_json::Value;

const XID79: &str =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

/// The first `xid` event of a report.
fn xid(r: &Value) -> Value {
    of_kind(r, "xid")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("the Xid is never dropped: {}", r["events"]))
}

#[test]
fn german_journal_fixture_is_read_line_by_line() {
    let r = analyze_json(&["corpus/journal-de-locale-ecc/"]);
    let input = &r["inputs"][0];
    assert_eq!(input["format"], "journal");
    assert_eq!(
        input["lines_recognized"], input["lines"],
        "every German stamp is read"
    );
    let loads: Vec<String> = of_kind(&r, "driver_load")
        .iter()
        .map(|e| e["time"].as_str().unwrap()[5..16].to_string())
        .collect();
    // Mär, Mai, Okt
    assert_eq!(loads, ["03-03T09:13", "05-12T07:40", "10-20T06:55"]);
    let x = xid(&r);
    assert_eq!(x["code"], 48);
    assert!(x["time"]
        .as_str()
        .unwrap()
        .ends_with("-10-23T03:17:42.000000Z"));
    assert_eq!(x["time_quality"], "estimated", "no year, no zone");
    assert_eq!(x["host"], "gpu-node-05");
    assert_eq!(r["verdict"]["root_cause_layer"], "gpu_memory");
}

#[test]
fn german_stamps_with_year_and_zone_given_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("journal.txt");
    std::fs::write(
        &f,
        format!("-- Boot 0123 --\nMär 14 02:13:07 gpu-node-05 kernel: {XID79}\n"),
    )
    .unwrap();
    let (code, out, err) = run(&[
        "analyze",
        "--format",
        "json",
        "--year",
        "2026",
        "--tz",
        "+01:00",
        f.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let x = xid(&r);
    assert_eq!(x["time"], "2026-03-14T01:13:07.000000Z");
    assert_eq!(x["time_quality"], "exact");
}

#[test]
fn japanese_and_compact_cjk_stamps() {
    // ja_JP pads one-digit months with a space
    let r = analyze_text(
        "journal.txt",
        &format!(" 5月 01 12:00:00 gpu-node-05 kernel: {XID79}\n 5月 01 12:00:01 gpu-node-05 systemd[1]: x\n"),
    );
    let x = xid(&r);
    assert!(
        x["time"]
            .as_str()
            .unwrap()
            .ends_with("-05-01T12:00:00.000000Z"),
        "{x}"
    );
    assert_eq!(x["host"], "gpu-node-05");
    assert_eq!(x["time_quality"], "estimated");
    let r = analyze_text(
        "messages",
        &format!("2024年5月1日 12:00:00 gpu-node-05 kernel: {XID79}\n"),
    );
    let x = xid(&r);
    assert_eq!(x["time"], "2024-05-01T12:00:00.000000Z");
    assert_eq!(x["time_quality"], "estimated", "a year but no zone");
    let r = analyze_text(
        "messages",
        &format!("12月 19 15:21:07 gpu-node-05 kernel: {XID79}\n"),
    );
    assert!(xid(&r)["time"]
        .as_str()
        .unwrap()
        .ends_with("-12-19T15:21:07.000000Z"));
}

#[test]
fn dmesg_human_deltas_count_from_the_minute_stamp() {
    let text = format!(
        "[Oct23 03:16] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n\
         [  +0.000127] usb 1-1: New USB device found, idVendor=046b\n\
         [Oct23 03:17] pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received: 0000:3a:00.0\n\
         [  +0.000014] pcieport 0000:3a:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)\n\
         [  +0.128400] {XID79}\n\
         [  +0.000011] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"
    );
    let r = analyze_text("dmesg-H.txt", &text);
    assert_eq!(r["inputs"][0]["format"], "dmesg");
    assert_eq!(r["inputs"][0]["lines_recognized"], 6);
    let x = xid(&r);
    // 03:17 + 0.000014 + 0.128400 s; the minute stamp has no seconds, so only estimated
    assert!(
        x["time"]
            .as_str()
            .unwrap()
            .ends_with("-10-23T03:17:00.128414Z"),
        "{x}"
    );
    assert_eq!(x["time_quality"], "estimated");
    let off = of_kind(&r, "fell_off_bus");
    assert!(off
        .iter()
        .any(|e| e["time"].as_str().unwrap().ends_with("03:17:00.128425Z")));
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    // a delta with no minute stamp above it: the event stays, without a time
    let r = analyze_text("dmesg-H.txt", &format!("[  +0.128400] {XID79}\n"));
    let x = xid(&r);
    assert!(x["time"].is_null());
    assert_eq!(x["time_quality"], "none");
}

#[test]
fn german_dmesg_ctime_is_read() {
    let r = analyze_text("dmesg.txt", &format!("[Fr Okt 23 03:17:42 2026] {XID79}\n"));
    let x = xid(&r);
    assert_eq!(x["time"], "2026-10-23T03:17:42.000000Z");
    assert_eq!(x["time_quality"], "estimated", "dmesg -T has no zone");
}

#[test]
fn unknown_locales_keep_the_event_without_a_time() {
    for line in [
        format!("23 oct. 03:17:42 gpu-node-05 kernel: {XID79}"),
        format!("ott 23 03:17:42 gpu-node-05 kernel: {XID79}"),
        format!("10月 99 03:17:42 gpu-node-05 kernel: {XID79}"),
    ] {
        let r = analyze_text("messages", &format!("{line}\n"));
        let x = xid(&r);
        assert!(x["time"].is_null(), "{line}: {x}");
        assert_eq!(x["time_quality"], "none");
        assert_eq!(x["message"], line.as_str());
        assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    }
}
