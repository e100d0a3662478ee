//! Issue 37, finding 4: nothing outside the input. A symbolic link inside an input folder is
//! followed only when its target stays inside that folder (or with `--follow-links`); others
//! are skipped with a warning that names them. Before: `kern.log -> /elsewhere/kern.log` was
//! read and its lines quoted back in the report.

mod common;
use common::*;

#[cfg(unix)]
#[test]
fn links_out_of_the_input_folder_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    let case = dir.path().join("case");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(case.join("sub")).unwrap();
    let secret = "[ 100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=OUTSIDE-SECRET, GPU has fallen off the bus.\n";
    std::fs::write(outside.join("kern.log"), secret).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("dir").join("dmesg.log"), secret).unwrap();
    let inside = "[ 200.000000] NVRM: Xid (PCI:0000:5e:00): 48, pid=2, name=inside, An uncorrectable double bit error\n";
    std::fs::write(case.join("sub").join("dmesg.log"), inside).unwrap();
    std::os::unix::fs::symlink(outside.join("kern.log"), case.join("kern.log")).unwrap();
    std::os::unix::fs::symlink(outside.join("dir"), case.join("linked-dir")).unwrap();
    std::os::unix::fs::symlink("sub/dmesg.log", case.join("inside-link.log")).unwrap();
    let c = case.to_str().unwrap();
    for cmd in [
        vec!["analyze", "--format", "json", c],
        vec!["scan", "--format", "jsonl", c],
    ] {
        let (code, out, err) = run(&cmd);
        assert!(code <= 1, "{cmd:?}: {err}");
        assert!(
            !out.contains("OUTSIDE-SECRET"),
            "{cmd:?}: the outside file was read"
        );
        let all = format!("{out}{err}");
        for name in ["kern.log", "linked-dir"] {
            assert!(
                all.contains(&format!("{name}: symbolic link to"))
                    && all.contains("outside the input folder"),
                "{cmd:?}: no warning names {name}: {err}"
            );
        }
        // a link that stays inside is followed
        assert!(out.contains("inside"), "{cmd:?}: {out}");
    }
    let (_, out, _) = run(&["analyze", "--format", "json", c]);
    assert!(out.contains("inside-link.log"), "the inside link is read");
    // --follow-links: the user says the links are theirs
    let (_, out, _) = run(&["analyze", "--follow-links", "--format", "json", c]);
    assert!(out.contains("OUTSIDE-SECRET"));
}
