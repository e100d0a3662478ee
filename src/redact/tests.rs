use super::*;

fn key(k: &str) -> Key {
    Key::new(k)
}

fn plain() -> Redactor {
    Redactor::new(&key("test-key"), &Known::default()).unwrap()
}

fn with_hosts(hosts: &[&str]) -> Redactor {
    let known = Known {
        hosts: hosts.iter().map(|h| h.to_string()).collect(),
        serials: BTreeSet::new(),
    };
    Redactor::new(&key("test-key"), &known).unwrap()
}

/// Every sample of every class is replaced (its value is gone, an alias of the class stands in
/// its place), and every `keep` line comes out as it went in.
#[test]
fn every_sample_is_redacted_and_every_kept_line_is_kept() {
    let (classes, keep) = classes::builtin();
    let r = plain();
    let mut checked = 0;
    for c in &classes {
        assert!(!c.samples.is_empty(), "class {} has no sample", c.name);
        for (line, value) in &c.samples {
            let out = r.text(line);
            assert!(
                !out.contains(value.as_str()),
                "class {}: `{value}` survives in `{out}`",
                c.name
            );
            assert!(
                out.contains(&format!("{}-", c.prefix)) || out.contains("ns-"),
                "class {}: no alias in `{out}`",
                c.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} samples");
    // every class has a near miss that the whole redaction leaves as it is
    for c in &classes {
        for line in &c.rejects {
            assert_eq!(&r.text(line), line, "class {}: a near miss changed", c.name);
        }
    }
    let with_rejects = classes.iter().filter(|c| !c.rejects.is_empty()).count();
    assert!(
        with_rejects >= 20,
        "{with_rejects} classes with near misses"
    );
    for line in &keep {
        assert_eq!(&r.text(line), line, "a kept line changed");
    }
    // and with hosts known, the kept lines still hold (no host shape eats a kernel symbol)
    let r = with_hosts(&["gpu-node-07", "dgx-a01"]);
    for line in &keep {
        assert_eq!(&r.text(line), line, "a kept line changed with hosts known");
    }
}

#[test]
fn escapes_are_boundaries_not_hiding_places() {
    let r = with_hosts(&["gpu-node-09"]);
    for s in [
        "\u{1b}[32mgpu-node-09\u{1b}[0m link down",
        r"\tgpu-node-09\n",
        r"\u001b[1mgpu-node-09",
        r"peer\t10.77.1.99",
        "\u{1b}[31m10.77.1.99\u{1b}[0m",
        r#"{\"token\": \"s3cr3t-value\"}"#,
        r"x\nHF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345",
    ] {
        let out = r.text(s);
        for v in ["gpu-node-09", "10.77.1.99", "s3cr3t-value", "hf_abcdefghij"] {
            assert!(!out.contains(v), "`{v}` survives in `{out}` (from `{s}`)");
        }
    }
    // the escapes themselves stay where they were
    let out = r.text("\u{1b}[32mgpu-node-09\u{1b}[0m");
    assert!(
        out.starts_with("\u{1b}[32mhost-") && out.ends_with("\u{1b}[0m"),
        "{out}"
    );
}

/// Where two values overlap, no piece of either survives.
#[test]
fn overlapping_values_leave_no_piece() {
    let r = with_hosts(&["cn-d003"]);
    let out = r.text("dinov2-giant-nodes.cn-d003.nolog [stderr] frame #3");
    assert!(!out.contains("d003") && !out.contains("dinov2"), "{out}");
    assert!(
        out.contains("host-") && out.ends_with(" [stderr] frame #3"),
        "{out}"
    );
    let out = r.text("dmesg-0c:42:a1:03:00:99-bwayne@example.com.log");
    assert!(
        !out.contains("bwayne") && !out.contains("0c:42") && !out.contains(":99"),
        "{out}"
    );
    let out = r.text("alice@gpu-node-07.example.com");
    assert!(!out.contains("alice") && !out.contains("example"), "{out}");
}

#[test]
fn one_value_one_alias_whatever_the_spelling_and_the_field() {
    let r = with_hosts(&["gpu-node-07"]);
    let a = r.text("gpu-node-07");
    assert_eq!(r.text("GPU-NODE-07.cluster.local"), a);
    assert_eq!(r.host("gpu-node-07.cluster.local"), a);
    // a peer of the same shape is found without being known
    assert!(r.text("peer gpu-node-12 closed").starts_with("peer host-"));
    // a file extension after a host is kept
    assert!(r.text("gpu-node-07.log").ends_with(".log"));
    let v6 = r.text("2001:db8::1");
    assert_eq!(r.text("2001:0db8:0000:0000:0000:0000:0000:0001"), v6);
    assert_eq!(r.host("2001:db8::1"), v6);
    assert_eq!(r.text("10.1.2.3"), r.host("10.1.2.3"));
    let mac = r.text("0c:42:a1:03:00:13");
    assert_eq!(r.text("0C-42-A1-03-00-13"), mac);
    assert_eq!(r.text("0c42.a103.0013"), mac);
    // an alias is never redacted again (scan output through merge --redact)
    assert_eq!(r.text(&a), a);
    assert_eq!(r.host(&a), a);
    assert_eq!(
        r.text(&format!("peer {v6} {mac}")),
        format!("peer {v6} {mac}")
    );
}

#[test]
fn aliases_depend_on_the_key() {
    let known = Known {
        hosts: ["gpu-node-07".to_string()].into(),
        serials: BTreeSet::new(),
    };
    let a = Redactor::new(&key("one"), &known).unwrap();
    let b = Redactor::new(&key("two"), &known).unwrap();
    let line = "gpu-node-07 10.1.2.3 alice@example.com";
    assert_eq!(
        a.text(line),
        Redactor::new(&key("one"), &known).unwrap().text(line)
    );
    let (x, y) = (a.text(line), b.text(line));
    for (p, q) in x.split(' ').zip(y.split(' ')) {
        assert_ne!(p, q, "{x} / {y}");
    }
    let alias = a.alias("host", "gpu-node-07");
    assert_eq!(alias.len(), "host-".len() + 12, "48 bits: {alias}");
}

/// 100 000 distinct addresses (a /15) get 100 000 distinct aliases.
#[test]
fn no_alias_collision_on_100k_addresses() {
    let r = plain();
    let mut seen = std::collections::HashSet::new();
    for i in 0..100_000u32 {
        let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i).to_string();
        assert!(seen.insert(r.alias("ip", &ip)), "collision at {ip}");
    }
}

#[test]
fn structured_values() {
    let r = plain();
    assert!(r.serial("1324021076543").starts_with("serial-"));
    assert_eq!(r.serial("N/A"), "N/A");
    assert_eq!(r.host("localhost"), "localhost");
    assert!(r.user("jdoe").starts_with("user-"));
    // a serial known from the inventory is found bare in a table cell, with the same alias
    let known = Known {
        hosts: BTreeSet::new(),
        serials: ["1324021076543".to_string()].into(),
    };
    let k = Redactor::new(&key("test-key"), &known).unwrap();
    assert_eq!(
        k.text("| 1324021076543 |"),
        format!("| {} |", k.serial("1324021076543"))
    );
}

#[test]
fn random_keys_differ() {
    let (_, a) = Key::random().unwrap();
    let (_, b) = Key::random().unwrap();
    assert_eq!(a.len(), 64);
    assert_ne!(a, b);
}
