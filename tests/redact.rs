//! `--redact` end to end: one value of every class of identifier is planted in log lines, file
//! names and folder names (folder per host), and no planted value survives in any output:
//! analyze as text, JSON, Markdown and HTML, the timeline, scan (JSON Lines, text, `--list`),
//! merge, and the warnings on stderr. One key gives one alias everywhere, another key other aliases.

mod common;
use common::*;
use faultline::redact::{Key, Known, Redactor};
use std::path::Path;

/// (class, text planted in an Xid line, the value that must not survive).
const PLANTED: &[(&str, &str, &str)] = &[
    ("ipv4", "peer 10.77.1.99<44163>", "10.77.1.99"),
    (
        "ipv4 after a JSON escape",
        r"addr\t10.77.1.98",
        "10.77.1.98",
    ),
    (
        "ipv6",
        "addr 2001:db8:85a3::8a2e:370:7334 up",
        "2001:db8:85a3::8a2e:370:7334",
    ),
    (
        "ipv6 link-local",
        "from fe80::1ff:fe23:4567:890a%ib0",
        "fe80::1ff:fe23:4567:890a",
    ),
    (
        "ib gid",
        "GID[  3]: fe80:0000:0000:0000:0c42:a103:0001:2345",
        "0c42:a103:0001:2345",
    ),
    (
        "ib guid",
        "Port GUID: 0x0c42a10300012345",
        "0c42a10300012345",
    ),
    ("mac colon", "HWaddr 0c:42:a1:03:00:12", "0c:42:a1:03:00:12"),
    ("mac dash", "adapter 0C-42-A1-03-00-13", "0c-42-a1-03-00-13"),
    ("mac dotted", "learned 0c42.a103.0014", "0c42.a103.0014"),
    (
        "email",
        "mail to Alice.Smith@example.org",
        "alice.smith@example.org",
    ),
    (
        "domain (nfs server)",
        "mounting fs01.storage.acme.internal:/export",
        "fs01.storage.acme",
    ),
    (
        "peer host (nfs)",
        "nfs: server storage-03 not responding",
        "storage-03",
    ),
    (
        "peer host (nccl)",
        "closed by remote peer dgx17.cluster<40862>",
        "dgx17",
    ),
    (
        "host of the fleet's shape",
        "peer gpu-node-12 lost",
        "gpu-node-12",
    ),
    (
        "host after an ANSI code",
        "\u{1b}[32mgpu-node-31\u{1b}[0m down",
        "gpu-node-31",
    ),
    (
        "hf token",
        "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "hf_abcdefghijklmnopqrst",
    ),
    (
        "wandb key",
        "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567",
        "0123456789abcdef0123456789abcdef01234567",
    ),
    (
        "aws secret",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wjalrxutnfemi",
    ),
    (
        "aws key id",
        "key AKIAIOSFODNN7EXAMPLE",
        "akiaiosfodnn7example",
    ),
    (
        "bearer",
        "Authorization: Bearer abcdEFGH1234tokenvalue",
        "abcdefgh1234tokenvalue",
    ),
    (
        "github token",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "ghp_abcdefghijklmnop",
    ),
    (
        "password flag",
        "cmd --password hunter2pass -x",
        "hunter2pass",
    ),
    ("json token", r#"{"token": "tok-77aa-sec"}"#, "tok-77aa-sec"),
    (
        "escaped json password",
        r#"{\"password\": \"pw-88bb-sec\"}"#,
        "pw-88bb-sec",
    ),
    (
        "jwt",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
        "dozjgnryp4j3jvmnhl0w5n",
    ),
    (
        "url credentials",
        "https://bob:s3cr3tpass@git.example.com/x",
        "s3cr3tpass",
    ),
    ("uid", "uid=1002(jdoe) gid=1002(jdoe)", "jdoe"),
    ("slurm user", "UserId=mkowalski(1002)", "mkowalski"),
    (
        "slurm job name",
        "JobName=llama70b-hparam-sweep",
        "llama70b-hparam",
    ),
    ("slurm node list", "NodeList=dgx-a[01-04,07]", "dgx-a[01"),
    ("session user", "session opened for user cfoster", "cfoster"),
    ("k8s namespace", "namespace=ml-research", "ml-research"),
    (
        "k8s pod",
        r#"pod="team-vision/trainer-7d4b9c8f6d-x2x4z""#,
        "trainer-7d4b9c8f6d",
    ),
    (
        "k8s pod namespace",
        r#"pod="team-vision/worker-3""#,
        "team-vision",
    ),
    (
        "k8s pod uid",
        "podUID=3f1c2b4a-1111-4222-8333-944445555666",
        "3f1c2b4a-1111",
    ),
    (
        "container id",
        "containerID=containerd://4f2a9c1b0d3e5f67889900aabbccddeeff00112233445566778899aabbccddee",
        "4f2a9c1b0d3e5f6788",
    ),
    (
        "gpu uuid",
        "UUID: GPU-12345678-90ab-cdef-1234-567890abcdef",
        "12345678-90ab-cdef",
    ),
    (
        "mig uuid",
        "MIG-4f2a9c1b-0d3e-5f67-8899-00aabbccddef",
        "4f2a9c1b-0d3e-5f67-8899-00aabbccddef",
    ),
    (
        "machine id",
        "machine-id 0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    (
        "boot id",
        "_BOOT_ID=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    ("home path", "cwd /home/fgarcia/run", "fgarcia"),
    ("macos home path", "/Users/gkimura/Downloads", "gkimura"),
    ("serial", "Serial Number: PKAQ1234X0042", "pkaq1234x0042"),
    // issue 37: classes that survived before
    (
        "presigned s3 signature",
        "url https://b.s3.amazonaws.com/x?X-Amz-Signature=9f8e7d6c5b4a3928aa77",
        "9f8e7d6c5b4a3928aa77",
    ),
    (
        "presigned s3 credential",
        "?X-Amz-Credential=AKIAI44QH8DHBEXAMPLE%2F2026",
        "akiai44qh8dhbexample",
    ),
    ("azure sas sig", "sas ?sv=2022&sig=AbCdZz9EfGhQ%3D&se=1", "abcdzz9efghq"),
    (
        "gcs signature",
        "?X-Goog-Signature=0a1b2c3d4e5f6a7b99",
        "0a1b2c3d4e5f6a7b99",
    ),
    (
        "azure account key",
        "AccountName=zeusacct;AccountKey=Zm9vYmFyYmF6cXV4QQ==;",
        "zm9vymfyymf6cxv4qq",
    ),
    ("azure account name", "AccountName=zeusacct2;", "zeusacct2"),
    (
        "slack webhook",
        "POST hooks.slack.com/services/T0123/B0456/XyZsecretPart9",
        "xyzsecretpart9",
    ),
    (
        "discord webhook",
        "discord.com/api/webhooks/123456789/AbC-dEf_ghiJK",
        "abc-def_ghijk",
    ),
    ("webhook secret", "WEBHOOK_SECRET=whsec_77abcdefg", "whsec_77abcdefg"),
    ("db password var", "DB_PASS=s3cretDbPass1 ./run", "s3cretdbpass1"),
    ("mysql pwd var", "MYSQL_PWD=myPw0rd77 mysql", "mypw0rd77"),
    ("mysql -p", "mysql -u root -phunter4242 shop", "hunter4242"),
    ("sshpass", "sshpass -p topsecret99 ssh x", "topsecret99"),
    (
        "pem private key",
        "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-----END PRIVATE KEY-----",
        "miievqibadanbgkqhkig9w0",
    ),
    (
        "ssh key comment",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6 hwayne@olympus",
        "hwayne",
    ),
    (
        "ssh public key",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 x",
        "aaaab3nzac1yc2eaaaadaqab",
    ),
    ("master addr", "MASTER_ADDR=zephyrus MASTER_PORT=1", "zephyrus"),
    ("--master_addr", "torchrun --master_addr boreas --nnodes 2", "boreas"),
    ("nfs server without digit", "nfs: server zeusfs not responding", "zeusfs"),
    ("on host", "lost on host apollon (exit 1)", "apollon"),
    ("nccl peer name", "completion from peer poseidon<44163>", "poseidon"),
    ("domain .co", "ssh gpu-ctl-03.hpc.acme.co", "gpu-ctl-03"),
    ("domain .xyz", "resolve login.zorg.xyz", "zorg"),
    ("domain .in", "proxy cache.cluster.tatacomm.in", "tatacomm"),
    ("domain .it", "mount storage.unimi.it:/x", "unimi"),
    ("domain .es", "nas.marenostrum.es", "marenostrum"),
    ("domain .pl", "ntp time.cyfronet.pl", "cyfronet"),
    ("domain .me", "vpn.kowalski.me up", "kowalski"),
    ("domain .sh", "deploy.hpcops.sh ok", "hpcops"),
    ("domain .tv", "cdn.streamco.tv", "streamco"),
    ("bare ib guid", "switch S-248a070300f1e2d0 port 3", "248a070300f1e2d0"),
    ("guid 4x4", "port 0c42:a103:00f1:e2d2 up", "0c42:a103:00f1:e2d2"),
    (
        "cloud instance",
        "instance i-0abcd1234ef567890 impaired",
        "0abcd1234ef567890",
    ),
    ("s3 bucket", "s3://acme-ml-checkpoints/run7", "acme-ml-checkpoints"),
    ("gcs bucket", "gs://zeus-training-data/x", "zeus-training-data"),
    (
        "virtual-host bucket",
        "https://acme-datasets.s3.us-east-1.amazonaws.com/x",
        "acme-datasets",
    ),
    (
        "azure blob account",
        "https://zeusstore.blob.core.windows.net/c",
        "zeusstore",
    ),
    ("mac without separators", "HWaddr 0c42a1030077", "0c42a1030077"),
    ("ipv4 with leading zeros", "ping 010.077.001.099", "010.077.001.099"),
    (
        "nccl remoteGids",
        "localGid fe80::1 remoteGidsfd00:1148:0:0:a288:c2ff:fe03:ff1f hca mlx5_0",
        "a288:c2ff:fe03:ff1f",
    ),
    (
        "uuid after _",
        "job_5d7c1e2a-3b4c-4d5e-8f90-a1b2c3d4e5f7",
        "5d7c1e2a-3b4c",
    ),
    ("mac after _", "port_0c:42:a1:03:00:55", "0c:42:a1:03:00:55"),
    (
        "token after _",
        "cfg_hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa987654",
        "zyxwvutsrqponmlkjihg",
    ),
    (
        "pod log path namespace",
        "/var/log/pods/team-nlp_trainer-5f7d8c9b-q8w2e_7c1e2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/main/0.log",
        "team-nlp",
    ),
    (
        "pod log path pod",
        "var/log/pods/team-cv_trainer-6a7b8c9d-x1y2z_8c1e2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/main/0.log",
        "trainer-6a7b8c9d",
    ),
    (
        "pod log path uid",
        "var/log/pods/team-cv_w-1_9d1e2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b/main/0.log",
        "9d1e2a3b-4c5d",
    ),
];

/// Values planted in file and folder names (and the host folders' names).
const IN_NAMES: &[&str] = &[
    "gpu-node-07",
    "dgx-b200-4",
    "172.16.4.20",
    "0c:42:a1:03:00:99",
    "bwayne@example.com",
    "ljonesy",
    "10.9.8.7",
    // archive member names (folders and files inside a tar)
    "frankmiller",
    "team-ops",
    "monitor-7c9d",
    "1c2d3e4f-1111",
    "login.zorg2.xyz",
];

/// The case: two host folders, planted lines, identifiers in file names, a user's home folder,
/// and a corrupt file whose name is an address (its warning goes to stderr).
fn plant(root: &Path) {
    let a = root.join("gpu-node-07");
    std::fs::create_dir_all(&a).unwrap();
    let mut log = String::new();
    for (i, (_, text, _)) in PLANTED.iter().enumerate() {
        log.push_str(&format!(
            "Mar 14 02:{:02}:{:02} gpu-node-07 kernel: [1795950.{:06}] NVRM: Xid (PCI:0000:3b:00): 13, pid={}, name=python, Graphics Exception: {text}\n",
            10 + i / 60,
            i % 60,
            i,
            1000 + i
        ));
    }
    log.push_str("Mar 14 02:20:00 gpu-node-07 kernel: [1796600.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=2000, name=python, GPU has fallen off the bus.\n");
    std::fs::write(a.join("kern-172.16.4.20.log"), log).unwrap();
    let b = root.join("dgx-b200-4").join("home").join("ljonesy");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(
        b.join("dmesg-0c:42:a1:03:00:99-bwayne@example.com.log"),
        "[ 1795955.589904] NVRM: Xid (PCI:0000:5e:00): 48, pid=77, name=python, An uncorrectable double bit error\n",
    )
    .unwrap();
    std::fs::write(b.join("bad-10.9.8.7.gz"), b"\x1f\x8b\x08\x00garbage").unwrap();
    // a tar whose member names hold a home folder, a pod log path and a domain
    let xid = b"[ 1795956.000000] NVRM: Xid (PCI:0000:5e:00): 31, pid=78, name=python, MMU Fault\n";
    let mut t = tar::Builder::new(Vec::new());
    for name in [
        "home/frankmiller/dmesg.log",
        "var/log/pods/team-ops_monitor-7c9d_1c2d3e4f-1111-4222-8333-944445555777/main/0.log",
        "login.zorg2.xyz/kern.log",
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(xid.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        t.append_data(&mut h, name, &xid[..]).unwrap();
    }
    std::fs::write(
        root.join("dgx-b200-4").join("bundle.tar"),
        t.into_inner().unwrap(),
    )
    .unwrap();
}

/// The planted values `out` still holds (case-insensitive).
fn survivors(out: &str) -> Vec<String> {
    let low = out.to_lowercase();
    let mut left: Vec<String> = PLANTED
        .iter()
        .filter(|(_, _, v)| low.contains(&v.to_lowercase()))
        .map(|(c, _, v)| format!("{c}: {v}"))
        .collect();
    left.extend(
        IN_NAMES
            .iter()
            .filter(|v| low.contains(&v.to_lowercase()))
            .map(|v| format!("name: {v}")),
    );
    left
}

fn ok(args: &[&str]) -> (String, String) {
    let (code, out, err) = run(args);
    assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
    (out, err)
}

#[test]
fn no_planted_value_survives_in_any_format() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("case");
    plant(&root);
    let case = root.to_str().unwrap();
    assert!(PLANTED.len() + IN_NAMES.len() >= 80);
    // without --redact every planted value is in the report: the test can fail
    let (plain, _) = ok(&["analyze", "--format", "json", case]);
    let seen = survivors(&plain);
    assert_eq!(
        seen.len(),
        PLANTED.len() + IN_NAMES.len(),
        "planted values missing from the plain report: the case no longer tests them"
    );
    let key = "test-key-one";
    let alias = Redactor::new(&Key::new(key), &Known::default())
        .unwrap()
        .alias("host", "gpu-node-07");
    let mut outputs: Vec<(String, String, String)> = Vec::new();
    for fmt in ["json", "text", "markdown", "html"] {
        let (out, err) = ok(&["analyze", "--redact-key", key, "--format", fmt, case]);
        outputs.push((format!("analyze {fmt}"), out, err));
    }
    for fmt in ["json", "text"] {
        let (out, err) = ok(&["timeline", "--redact-key", key, "--format", fmt, case]);
        outputs.push((format!("timeline {fmt}"), out, err));
    }
    let scan_root = dir.path().to_str().unwrap();
    for fmt in ["jsonl", "text", "openmetrics"] {
        let (out, err) = ok(&["scan", "--redact-key", key, "--format", fmt, scan_root]);
        outputs.push((format!("scan {fmt}"), out, err));
    }
    // merge: of a plain scan, redacted by merge, and of a redacted scan
    let shard = dir.path().join("plain.jsonl");
    let (plain_scan, _) = ok(&["scan", "--format", "jsonl", scan_root]);
    assert!(
        !survivors(&plain_scan).is_empty(),
        "the plain scan names the hosts"
    );
    std::fs::write(&shard, &plain_scan).unwrap();
    let shard = shard.to_str().unwrap();
    let (merged, err) = ok(&["merge", "--redact-key", key, "--format", "jsonl", shard]);
    outputs.push(("merge jsonl".into(), merged.clone(), err));
    let (out, err) = ok(&["merge", "--redact-key", key, "--format", "text", shard]);
    outputs.push(("merge text".into(), out, err));
    let red_shard = dir.path().join("red.jsonl");
    std::fs::write(&red_shard, &outputs[6].1).unwrap();
    let (merged_red, _) = ok(&["merge", "--format", "jsonl", red_shard.to_str().unwrap()]);
    let (out, err) = ok(&["scan", "--list", "--redact-key", key, scan_root]);
    outputs.push(("scan --list".into(), out, err));
    for (what, out, err) in &outputs {
        let left = survivors(out);
        assert!(left.is_empty(), "{what}: survivors {left:?}");
        let left = survivors(err);
        assert!(left.is_empty(), "{what} (stderr): survivors {left:?}");
        // (merge's JSON Lines output is the fleet summary alone: counts, no host)
        assert!(
            what == "merge jsonl" || what == "scan openmetrics" || out.contains(&alias),
            "{what}: the host's alias {alias} is missing"
        );
    }
    // scan then merge, or merge of the plain scan with the key: the same fleet summary
    assert_eq!(
        merged.lines().last(),
        merged_red.lines().last(),
        "one key, one summary"
    );
    serde_json::from_str::<serde_json::Value>(&outputs[0].1).expect("redacted JSON parses");
    // the corrupt file's path is there, redacted; a missing input's warning on stderr too
    assert!(
        outputs[0].1.contains("bad-ip-"),
        "the corrupt file is listed"
    );
    let gone = dir.path().join("gone-10.9.8.6.log");
    let (_, err) = ok(&["analyze", "--redact-key", key, case, gone.to_str().unwrap()]);
    assert!(
        err.contains("gone-ip-") && !err.contains("10.9.8.6"),
        "{err}"
    );
    // another key: other aliases, and none of the first key's
    let (other, _) = ok(&[
        "analyze",
        "--redact-key",
        "test-key-two",
        "--format",
        "json",
        case,
    ]);
    assert!(survivors(&other).is_empty());
    assert!(!other.contains(&alias));
    assert!(other.contains("host-"));
    // the report stays useful: PCI bus ids, Xid codes, kinds and layers are kept
    for kept in [
        "0000:3b:00.0",
        "\"code\": 79",
        "fell_off_bus",
        "\"hardware\"",
        "NVRM: Xid",
    ] {
        assert!(outputs[0].1.contains(kept), "{kept} lost");
    }
}

/// Finding 3 (issue 37): a random key is never printed (stderr next to a report let small
/// spaces be brute-forced back); `--redact-key-file` writes it once and reads it after, and the
/// report says whether its aliases are stable across runs.
#[test]
fn a_random_key_is_never_printed_and_a_key_file_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("case");
    plant(&root);
    let case = root.to_str().unwrap();
    let (out, err) = ok(&["analyze", "--redact", "--format", "json", case]);
    assert!(!err.contains("redaction key"), "{err}");
    // nothing 64 hex digits long anywhere: the key is not shown
    for text in [&out, &err] {
        let hex_run = text
            .split(|c: char| !c.is_ascii_hexdigit())
            .any(|w| w.len() >= 64);
        assert!(!hex_run, "a key-like value is shown");
    }
    assert!(
        out.contains("aliases are NOT stable across runs"),
        "no note"
    );
    let again = ok(&["analyze", "--redact", "--format", "json", case]).0;
    assert_ne!(out, again, "two random keys, two sets of aliases");
    // the key file: written on the first run (owner only), read on the next
    let file = dir.path().join("redact.key");
    let f = file.to_str().unwrap();
    let (one, err) = ok(&["analyze", "--redact-key-file", f, "--format", "json", case]);
    let key = std::fs::read_to_string(&file).unwrap();
    assert_eq!(key.trim().len(), 64);
    assert!(!err.contains(key.trim()) && !one.contains(key.trim()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o077,
            0,
            "the key file is readable by others: {mode:o}"
        );
    }
    assert!(one.contains("written to the key file"), "no note");
    let (two, _) = ok(&["analyze", "--redact-key-file", f, "--format", "json", case]);
    assert!(two.contains("read from the key file"));
    let events = |s: &str| s.split("\"incidents\"").next().unwrap().to_string();
    assert_eq!(
        events(&one),
        events(&two),
        "the key file gives the same aliases"
    );
    // the key of the file given as --redact-key: the same aliases too
    let (three, _) = ok(&[
        "analyze",
        "--redact-key",
        key.trim(),
        "--format",
        "json",
        case,
    ]);
    assert_eq!(events(&one), events(&three));
    // the environment variable is the key when no flag is given
    let via_env = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["analyze", "--redact", "--format", "json", case])
        .env(faultline::redact::KEY_ENV, key.trim())
        .output()
        .unwrap();
    assert_eq!(
        events(&String::from_utf8_lossy(&via_env.stdout)),
        events(&one)
    );
    // an empty key file stops the run before anything is written
    let empty = dir.path().join("empty.key");
    std::fs::write(&empty, "").unwrap();
    let (code, out, err) = run(&[
        "analyze",
        "--redact-key-file",
        empty.to_str().unwrap(),
        case,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() && err.contains("empty"), "{err}");
}
