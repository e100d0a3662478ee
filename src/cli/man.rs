//! `faultline man`: the manual page from the clap definition.

use super::Cli;
use std::io::Write;

/// The man page: the top-level page (name, synopsis, description, commands), then one section
/// per subcommand with its synopsis, description and options, all from the clap definition.
pub(super) fn man_page() -> Vec<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    let top = clap_mangen::Man::new(cmd.clone());
    // writing to a Vec cannot fail
    let _ = top.render_title(&mut out);
    let _ = top.render_name_section(&mut out);
    let _ = top.render_synopsis_section(&mut out);
    let _ = top.render_description_section(&mut out);
    // the commands are sections of this page, not pages of their own (`faultline-analyze(1)`)
    let mut subs = Vec::new();
    let _ = top.render_subcommands_section(&mut subs);
    let mut subs = String::from_utf8_lossy(&subs).into_owned();
    for sub in cmd.get_subcommands() {
        subs = subs.replace(
            &format!("faultline\\-{}(1)", sub.get_name()),
            &format!("\\fBfaultline {}\\fR", sub.get_name()),
        );
    }
    out.extend_from_slice(subs.as_bytes());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("faultline {}", sub.get_name());
        let _ = writeln!(out, ".SH \"{}\"", name.to_uppercase());
        let page = clap_mangen::Man::new(sub.clone());
        let mut part = Vec::new();
        let _ = page.render_synopsis_section(&mut part);
        let _ = page.render_description_section(&mut part);
        let _ = page.render_options_section(&mut part);
        // the subcommand's own headings become subsections of its section
        for line in String::from_utf8_lossy(&part).lines() {
            match line.strip_prefix(".SH ") {
                Some(h) => {
                    let _ = writeln!(out, ".SS {h}");
                }
                None => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    let _ = top.render_version_section(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    fn completions(shell: clap_complete::Shell) -> String {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "faultline", &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Every subcommand and every long flag of every subcommand, from the clap definition, is
    /// offered by the bash, zsh and fish completions and documented in the man page.
    #[test]
    fn every_subcommand_and_long_flag_is_in_the_completions_and_the_man_page() {
        // roff escapes dashes: `\-\-max\-depth`
        let man = String::from_utf8(man_page()).unwrap().replace("\\-", "-");
        let bash = completions(clap_complete::Shell::Bash);
        let zsh = completions(clap_complete::Shell::Zsh);
        let fish = completions(clap_complete::Shell::Fish);
        let cmd = Cli::command();
        let mut checked = 0;
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            assert!(man.contains(&format!("faultline {name}")), "man: {name}");
            assert!(bash.contains(name), "bash: {name}");
            assert!(zsh.contains(&format!("'{name}:")), "zsh: {name}");
            assert!(fish.contains(&format!("-a \"{name}\"")), "fish: {name}");
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else {
                    continue;
                };
                let flag = format!("--{long}");
                assert!(man.contains(&flag), "man: {name} {flag}");
                assert!(bash.contains(&flag), "bash: {name} {flag}");
                assert!(zsh.contains(&flag), "zsh: {name} {flag}");
                assert!(fish.contains(&format!("-l {long}")), "fish: {name} {flag}");
                checked += 1;
            }
        }
        assert!(checked > 30, "only {checked} flags seen");
        for s in ["bash", "zsh", "fish"] {
            assert!(
                Cli::try_parse_from(["faultline", "completions", s]).is_ok(),
                "{s}"
            );
        }
    }
}
