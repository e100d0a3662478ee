//! The HTML report: self-contained, in agreement with the JSON report, escaped against hostile
//! lines, deterministic, redactable, and (where Chromium is installed) rendered by a browser.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn html(args: &[&str]) -> String {
    let mut all = vec!["analyze", "--format", "html"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    out
}

/// The values of one attribute (`id="…"`, `href="#…"`) in the page.
fn attr_values(page: &str, prefix: &str) -> Vec<String> {
    page.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &page[i + prefix.len()..];
            rest[..rest.find('"').expect("closing quote")].to_string()
        })
        .collect()
}

/// The text a report value becomes on the page.
fn esc(s: &str) -> String {
    faultline::report::html::escape(s)
}

#[test]
fn page_is_self_contained_and_its_links_resolve() {
    let page = html(&["corpus/multi-host-gpu-lost/"]);
    assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(page.trim_end().ends_with("</html>"));
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    let lower = page.to_ascii_lowercase();
    for banned in [
        "<script", "<link", "<iframe", "<img", "src=", "url(", "@import", "http://", "https://",
    ] {
        assert!(
            !lower.contains(banned),
            "the page must load nothing: found {banned}"
        );
    }
    // every in-page link has its target
    let ids: BTreeSet<String> = attr_values(&page, " id=\"").into_iter().collect();
    let links = attr_values(&page, "href=\"#");
    assert!(links.len() > 100, "marks, evidence and table link to rows");
    for l in &links {
        assert!(ids.contains(l), "link #{l} has no target");
    }
    for section in [
        "verdict",
        "impact",
        "timeline",
        "incidents",
        "gpus",
        "job",
        "events",
        "inputs",
        "attach",
    ] {
        assert!(ids.contains(section), "section {section} missing");
    }
    // the picture: one lane per host/GPU of the 8 hosts × 8 GPUs, a legend, the first fault
    assert!(page.contains("<svg class=\"tl-svg\""));
    assert!(page.contains("class=\"legend\""));
    assert_eq!(
        page.matches("<rect class=\"lane").count(),
        65,
        "64 GPU lanes and one host lane"
    );
    assert!(page.contains("i1: first fault"));
    assert!(
        page.contains("class=\"ll suspect\""),
        "the suspect GPU's lane is marked"
    );
}

#[test]
fn page_agrees_with_the_json_report() {
    for case in [
        "corpus/multi-host-gpu-lost/",
        "corpus/bug-report-a100/",
        "corpus/job-desync/",
    ] {
        let page = html(&[case]);
        let r = analyze_json(&[case]);
        let layer = r["verdict"]["root_cause_layer"].as_str().unwrap();
        let summary = r["verdict"]["summary"].as_str().unwrap();
        let verdict_line = page
            .lines()
            .find(|l| l.contains("id=\"verdict\""))
            .expect("verdict line");
        assert!(
            verdict_line.contains(&format!("B-{layer}")),
            "{case}: {verdict_line}"
        );
        assert!(
            verdict_line.contains(&esc(summary)),
            "{case}: {verdict_line}"
        );
        let ids: BTreeSet<String> = attr_values(&page, " id=\"").into_iter().collect();
        let events = r["events"].as_array().unwrap();
        for inc in r["incidents"].as_array().unwrap() {
            let id = inc["id"].as_str().unwrap();
            assert!(ids.contains(id), "{case}: incident {id} has no section");
            assert!(page.contains(&esc(inc["root_cause"]["summary"].as_str().unwrap())));
            for a in inc["actions"].as_array().unwrap() {
                assert!(
                    page.contains(&esc(a.as_str().unwrap())),
                    "{case}: action {a}"
                );
            }
            for ev in inc["root_cause"]["evidence"].as_array().unwrap() {
                let ev = ev.as_str().unwrap();
                assert!(ids.contains(ev), "{case}: evidence {ev} has no row");
                let e = events.iter().find(|e| e["id"] == ev).unwrap();
                let cite = format!(
                    "{}:{}</a>: {}",
                    esc(e["source"]["path"].as_str().unwrap()),
                    e["source"]["line"],
                    esc(e["message"].as_str().unwrap())
                );
                assert!(page.contains(&cite), "{case}: evidence line {cite}");
            }
        }
        // every event with a time or an uptime is a mark of the picture, the others are listed
        let timed = events
            .iter()
            .filter(|e| !e["time"].is_null() || !e["uptime_s"].is_null())
            .count();
        assert_eq!(page.matches("<title>e").count(), timed, "{case}: marks");
        let untimed = events.len() - timed;
        assert_eq!(
            page.contains("Events without a time"),
            untimed > 0,
            "{case}"
        );
    }
}

#[test]
fn hostile_lines_cannot_inject_markup() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("node-a");
    std::fs::create_dir(&host).unwrap();
    let lines = [
        "Mar 14 02:13:05 node-a kernel: [1795950.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=<script>alert(1)</script>, Graphics Exception: ESR 0x504648=0x2000 \"><img src=x onerror=alert(2)>",
        "Mar 14 02:13:07 node-a kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid='</title></svg><svg onload=alert(3)>', name=\u{1b}[31mpy\u{202e}txt.exe, GPU has fallen off the bus.",
    ];
    std::fs::write(host.join("kern<i>x&y.log"), lines.join("\n") + "\n").unwrap();
    let page = html(&[dir.path().to_str().unwrap()]);
    for raw in [
        "<script",
        "<img",
        "<svg onload",
        "</title></svg>",
        "<i>x",
        "\u{1b}",
        "\u{202e}",
    ] {
        assert!(!page.contains(raw), "raw {raw:?} reached the page");
    }
    assert!(page.contains("name=&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
    assert!(
        page.contains("kern&lt;i&gt;x&amp;y.log"),
        "paths are escaped too"
    );
    assert!(
        page.contains("\u{241b}[31mpy⟨U+202E⟩txt.exe"),
        "controls are shown, not obeyed"
    );
    // the hostile text sits inside the hover titles of the marks and the evidence block
    let svg =
        &page[page.find("<svg class=\"tl-svg\"").unwrap()..page.find("</svg></figure>").unwrap()];
    assert!(svg.contains("&lt;/title&gt;&lt;/svg&gt;&lt;svg onload=alert(3)&gt;"));
    assert_eq!(
        page.matches("<svg").count(),
        1,
        "one picture, nothing injected"
    );
    assert_eq!(page.matches("</svg>").count(), 1);
}

#[test]
fn output_is_byte_identical_and_holds_no_time_of_its_own() {
    let a = html(&["--jobs", "1", "corpus/multi-host-gpu-lost/"]);
    let b = html(&["corpus/multi-host-gpu-lost/"]);
    assert_eq!(a, b, "two runs differ");
    let json = analyze_json(&["corpus/multi-host-gpu-lost/"]).to_string();
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        !a.contains(&today) || json.contains(&today),
        "the page holds today's date and the inputs do not"
    );
}

#[test]
fn redacted_page_keeps_its_markup() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("gpu-node-17");
    std::fs::create_dir(&host).unwrap();
    std::fs::write(
        host.join("kern.log"),
        "Mar 14 02:13:07 gpu-node-17 kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python token=hunter2, GPU has fallen off the bus.\n\
         Mar 14 02:13:08 gpu-node-17 kernel: [1795956.000000] mlx5_core 0000:5c:00.0 ens1f0np0: Link down peer 10.20.30.40\n",
    )
    .unwrap();
    let plain = html(&[dir.path().to_str().unwrap()]);
    let page = html(&["--redact", dir.path().to_str().unwrap()]);
    for secret in ["gpu-node-17", "hunter2", "10.20.30.40"] {
        assert!(plain.contains(secret), "{secret} is in the unredacted page");
        assert!(!page.contains(secret), "{secret} survived --redact");
    }
    assert!(
        page.contains("token=secret-"),
        "the secret's alias stands in its place"
    );
    // the structure is the same: the same tags in the same order
    let tags = |p: &str| -> Vec<String> {
        p.split('<')
            .skip(1)
            .map(|t| t.split([' ', '>']).next().unwrap_or("").to_string())
            .collect()
    };
    // the redacted page says how stable its aliases are, in a notes list the plain page has not
    let (head, rest) = page
        .split_once("<h3>Notes</h3>\n<ul>\n<li>redaction: aliases are")
        .expect("the redacted page carries a redaction note");
    assert!(
        !plain.contains("<h3>Notes</h3>"),
        "the plain page has no notes"
    );
    let tail = &rest[rest.find("</ul>\n").expect("the notes list ends") + "</ul>\n".len()..];
    assert_eq!(tags(&plain), tags(&format!("{head}{tail}")));
}

/// Runs a command with a deadline; returns its stdout, or None when it failed or hung.
fn run_with_deadline(cmd: &mut Command, limit: Duration) -> Option<String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).map(|_| s)
    });
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let text = reader.join().ok()?.ok()?;
            return status.success().then_some(text);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn chromium_renders_the_timeline_and_the_verdict() {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        eprintln!(
            "skipped: /usr/bin/chromium is absent (apt-get install chromium to run this test)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let (code, _, err) = run(&[
        "analyze",
        "--format",
        "html",
        "-o",
        file.to_str().unwrap(),
        "corpus/multi-host-gpu-lost/",
    ]);
    assert_eq!(code, 0, "{err}");
    let profile = dir.path().join("profile");
    let dom = run_with_deadline(
        Command::new(chromium).args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{}", file.display()),
        ]),
        Duration::from_secs(120),
    )
    .expect("chromium --dump-dom ran");
    let r = analyze_json(&["corpus/multi-host-gpu-lost/"]);
    // the browser's DOM holds the verdict, the picture with every mark, and every incident
    let verdict = dom
        .split("id=\"verdict\"")
        .nth(1)
        .expect("the verdict element is in the DOM");
    assert!(verdict.contains(&esc(r["verdict"]["summary"].as_str().unwrap())));
    let svg_start = dom
        .find("<svg class=\"tl-svg\"")
        .expect("timeline SVG in the DOM");
    let svg = &dom[svg_start..svg_start + dom[svg_start..].find("</svg>").unwrap()];
    let timed = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["time"].is_null() || !e["uptime_s"].is_null())
        .count();
    assert_eq!(
        svg.matches("class=\"m L-").count(),
        timed,
        "every mark parsed into the SVG"
    );
    assert!(
        svg.contains("class=\"ring ff\""),
        "the first fault is ringed"
    );
    assert_eq!(
        dom.matches("<article class=\"incident").count(),
        r["incidents"].as_array().unwrap().len()
    );
    assert!(
        dom.contains("id=\"attach\""),
        "the page was parsed to its end"
    );
}

#[test]
fn snapshot_of_one_report() {
    let page = html(&["corpus/xid79-aer-dmesg/"]);
    insta::assert_snapshot!("html_xid79_aer_dmesg", page);
}

/// Chromium with the flags that keep it offline and quiet, a fresh profile in `dir`.
fn chromium_cmd(chromium: &Path, dir: &Path, extra: &[String]) -> Command {
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!(
        "--user-data-dir={}",
        dir.join(format!("profile-{}", extra.len())).display()
    ))
    .args(extra);
    c
}

/// Width, viewport width and height of the report laid out `width` px wide: a page of our own
/// frames it (the report's policy forbids scripts in the report itself) and writes the numbers
/// into its DOM.
fn measure(chromium: &Path, dir: &Path, report: &Path, width: u32) -> (u64, u64, u64) {
    let frame = dir.join(format!("measure-{width}.html"));
    std::fs::write(
        &frame,
        format!(
            r#"<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="{}" style="width:{width}px;height:1000px;border:0"></iframe><script>
window.onload=function(){{var e=document.getElementById('f').contentDocument.documentElement;var p=document.createElement('pre');p.textContent='MEASURE '+e.scrollWidth+' '+e.clientWidth+' '+e.scrollHeight;document.body.appendChild(p);}};
</script></body></html>"#,
            report.file_name().unwrap().to_str().unwrap()
        ),
    )
    .unwrap();
    let dom = run_with_deadline(
        &mut chromium_cmd(
            chromium,
            dir,
            &[
                "--allow-file-access-from-files".into(),
                "--dump-dom".into(),
                format!("file://{}", frame.display()),
            ],
        ),
        Duration::from_secs(120),
    )
    .expect("chromium --dump-dom ran");
    let line = dom
        .split("<pre>MEASURE ")
        .nth(1)
        .expect("the measuring page wrote its numbers");
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(3)
        .map(|s| s.parse().unwrap())
        .collect();
    (n[0], n[1], n[2])
}

/// The 64-rank job in a real browser: a screenshot that is not blank, a page short enough that
/// the repeated consequences are folded (18,800 px before they were), and no horizontal
/// overflow at a laptop's and at a narrow width. The PNG is kept in the test's target folder
/// for a look.
#[test]
fn chromium_screenshot_of_a_64_rank_job() {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        eprintln!(
            "skipped: /usr/bin/chromium is absent (apt-get install chromium; .ci/run installs it)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let (code, _, err) = run(&[
        "analyze",
        "--format",
        "html",
        "-o",
        report.to_str().unwrap(),
        "corpus/multi-host-gpu-lost/",
    ]);
    assert_eq!(code, 0, "{err}");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("multi-host-gpu-lost.png");
    let _ = std::fs::remove_file(&png);
    run_with_deadline(
        &mut chromium_cmd(
            chromium,
            dir.path(),
            &[
                format!("--screenshot={}", png.display()),
                "--window-size=1280,2000".into(),
                format!("file://{}", report.display()),
            ],
        ),
        Duration::from_secs(120),
    )
    .expect("chromium --screenshot ran");
    let bytes = std::fs::read(&png).expect("a screenshot was written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let (w, h) = (
        u32::from_be_bytes(bytes[16..20].try_into().unwrap()),
        u32::from_be_bytes(bytes[20..24].try_into().unwrap()),
    );
    assert_eq!((w, h), (1280, 2000), "the window's size");
    // a blank page compresses to a few KB; the verdict, the 65 lanes and their marks do not
    assert!(
        bytes.len() > 60_000,
        "blank screenshot? {} bytes",
        bytes.len()
    );
    for width in [1280, 900] {
        let (scroll_w, client_w, height) = measure(chromium, dir.path(), &report, width);
        assert!(
            scroll_w <= client_w,
            "horizontal overflow at {width} px: {scroll_w} > {client_w}"
        );
        if width == 1280 {
            assert!(
                height < 9_000,
                "the page is {height} px high: are the consequences folded?"
            );
        }
    }
    eprintln!("screenshot: {}", png.display());
}

/// Folded consequences, their own style, a later snapshot as the state observed then, wrapping
/// without `break-all`, a print stylesheet, and the driver `nvidia-smi -q` names.
#[test]
fn page_reads_at_a_glance() {
    let page = html(&["corpus/multi-host-gpu-lost/"]);
    assert!(page.contains("<details><summary>7 more process_exit -6 on gpu-node-01 (8 in all, "));
    assert!(page.matches("<tr class=\"csq grp\">").count() >= 8);
    assert!(page.contains("<span class=\"csqtag\">consequence</span>"));
    assert!(
        page.contains(" csq\" cx="),
        "consequence marks have their own class"
    );
    assert!(!page.contains("break-all") && page.contains("@media print{"));
    assert!(page.contains("corpus/<wbr>multi-host-gpu-lost/<wbr>"));
    let page = html(&["corpus/slowdown-megatron-thermal/"]);
    assert!(page.contains("i1: state observed at 10:05:41"));
    assert!(page.contains("class=\"ring obs\"") && !page.contains("class=\"ring ff\""));
    assert!(page.contains("<strong>state observed at</strong>"));
    assert!(
        page.contains("<td class=\"mono\">550.90.07</td>"),
        "the host's driver"
    );
}
