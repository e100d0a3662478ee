//! Hostile and broken inputs: each gets a clear warning naming the input, the rest is analyzed,
//! the exit status stays 0 and the output is valid JSON.

mod common;
use common::*;
use std::io::Write;

const XID79: &str = "[  100.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn input<'a>(r: &'a serde_json::Value, suffix: &str) -> &'a serde_json::Value {
    r["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no input {suffix} in {}", r["inputs"]))
}

#[test]
fn broken_inputs_warn_and_the_good_one_is_still_analyzed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let good = format!("[    0.000000] Linux version 6.1\n{XID79}");
    std::fs::write(p.join("good.log"), &good).unwrap();
    // truncated gzip: the decoded prefix still counts
    let mut big = String::new();
    for i in 0..2000 {
        big.push_str(&format!(
            "[  {i:>5}.000000] usb 1-1: new device number {i}\n"
        ));
    }
    big.push_str(XID79);
    let z = gz(big.as_bytes());
    std::fs::write(p.join("trunc.log.gz"), &z[..z.len() - 40]).unwrap();
    // truncated zstd
    let zs = zstd::encode_all(big.as_bytes(), 3).unwrap();
    std::fs::write(p.join("trunc.log.zst"), &zs[..zs.len() / 2]).unwrap();
    // corrupt tar: a ustar magic with a broken checksum
    let mut tar = vec![b'x'; 1024];
    tar[257..263].copy_from_slice(b"ustar\0");
    std::fs::write(p.join("corrupt.tar"), &tar).unwrap();
    // binary junk, invalid UTF-8, NUL bytes
    let junk: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    std::fs::write(p.join("junk.bin"), &junk).unwrap();
    std::fs::write(p.join("latin1.log"), b"caf\xe9 \xff\xfe broken\n").unwrap();
    std::fs::write(p.join("nul.log"), b"abc\0def\n\0\0\n").unwrap();
    // a single 50 MB line
    std::fs::write(p.join("longline.log"), vec![b'a'; 50 << 20]).unwrap();
    std::fs::write(p.join("empty.log"), b"").unwrap();
    #[cfg(unix)]
    {
        let fifo = p.join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a fresh path in a temp dir.
        unsafe { libc_mkfifo(c.as_ptr()) };
    }
    let (code, out, err) = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let xids = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "xid" && e["code"] == 79)
        .count();
    assert!(xids >= 1, "the good file's Xid is found");
    let w = |s: &str| {
        input(&r, s)["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    };
    assert!(
        w("trunc.log.gz").contains("corrupt or truncated"),
        "{}",
        w("trunc.log.gz")
    );
    assert!(
        input(&r, "trunc.log.gz")["lines"].as_u64().unwrap() > 100,
        "the decoded prefix is analyzed"
    );
    assert!(
        w("trunc.log.zst").contains("corrupt or truncated"),
        "{}",
        w("trunc.log.zst")
    );
    assert!(w("corrupt.tar").contains("tar"), "{}", w("corrupt.tar"));
    assert!(
        w("junk.bin").contains("NUL") || w("junk.bin").contains("UTF-8"),
        "{}",
        w("junk.bin")
    );
    assert!(
        w("latin1.log").contains("invalid UTF-8"),
        "{}",
        w("latin1.log")
    );
    assert!(
        w("nul.log").contains("NUL byte at offset 3"),
        "{}",
        w("nul.log")
    );
    assert!(
        w("longline.log").contains("longer than"),
        "{}",
        w("longline.log")
    );
    assert_eq!(input(&r, "longline.log")["lines"], 1);
    assert_eq!(input(&r, "empty.log")["lines"], 0);
    #[cfg(unix)]
    {
        let notes = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(" | ");
        assert!(
            notes.contains("pipe") && notes.contains("not a regular file"),
            "{notes}"
        );
    }
}

#[cfg(unix)]
unsafe fn libc_mkfifo(path: *const std::ffi::c_char) {
    extern "C" {
        fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }
    mkfifo(path, 0o644);
}

#[test]
fn multi_member_gzip_and_tar_members_are_all_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let mut two = gz(XID79.as_bytes());
    two.extend(gz(b"[  200.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, An uncorrectable double bit error (DBE) has been detected.\n"));
    std::fs::write(p.join("bundle.log.gz"), &two).unwrap();
    let mut b = tar::Builder::new(Vec::new());
    for (name, body) in [
        ("node-a/var/log/dmesg", XID79),
        ("node-a/../../etc/evil", "harmless\n"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name.replace("../../", "up/"), body.as_bytes())
            .unwrap();
    }
    let t = b.into_inner().unwrap();
    std::fs::write(p.join("logs.tgz"), gz(&t)).unwrap();
    let r = analyze_json(&[p.to_str().unwrap()]);
    let codes: Vec<i64> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "xid")
        .filter_map(|e| e["code"].as_i64())
        .collect();
    assert!(codes.contains(&48), "second gzip member read: {codes:?}");
    assert!(
        r["inputs"].as_array().unwrap().iter().any(|i| i["path"]
            .as_str()
            .unwrap()
            .ends_with("logs.tgz!node-a/var/log/dmesg")),
        "{}",
        r["inputs"]
    );
    assert!(
        !p.join("etc").exists() && !p.join("node-a").exists(),
        "nothing is extracted"
    );
}

#[test]
fn decompression_bomb_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = vec![b'\n'; 300 << 20];
    let z = gz(&zeros);
    let f = dir.path().join("bomb.gz");
    std::fs::write(&f, &z).unwrap();
    let (code, out, err) = run(&[
        "analyze",
        "--format",
        "json",
        "--max-ratio",
        "100",
        f.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w = r["inputs"][0]["warnings"].to_string();
    assert!(w.contains("expansion ratio"), "{w}");
}

#[test]
fn large_compressed_text_is_scanned_as_a_stream_with_line_numbers_intact() {
    // ~16 MiB of poorly compressible lines, so the gzip is past the 8 MiB streaming threshold
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x: u64 = 0x2545F4914F6CDD1D;
    let mut text = Vec::with_capacity(17 << 20);
    let mut lines = 0u64;
    while text.len() < 16 << 20 {
        text.extend_from_slice(b"[  100.000000] blob ");
        for _ in 0..100 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            text.push(ALPHABET[(x % 64) as usize]);
        }
        text.push(b'\n');
        lines += 1;
    }
    text.extend_from_slice(XID79.as_bytes());
    lines += 1;
    let z = gz(&text);
    assert!(
        z.len() > 8 << 20,
        "compressed size {} is below the streaming threshold",
        z.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.log.gz");
    std::fs::write(&f, &z).unwrap();
    let r = analyze_json(&[f.to_str().unwrap()]);
    assert_eq!(r["inputs"][0]["lines"].as_u64().unwrap(), lines);
    let ev = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "xid")
        .expect("the Xid at the end");
    assert_eq!(ev["source"]["line"].as_u64().unwrap(), lines);
    // cut short: the blocks before the cut are analyzed and the input says why it stopped
    std::fs::write(&f, &z[..z.len() / 2]).unwrap();
    let r = analyze_json(&[f.to_str().unwrap()]);
    assert!(r["inputs"][0]["lines"].as_u64().unwrap() > 1000);
    assert!(
        r["inputs"][0]["warnings"]
            .to_string()
            .contains("corrupt or truncated"),
        "{}",
        r["inputs"][0]["warnings"]
    );
}
