//! The deployment recipes the README points at are files of the repository that fit together:
//! the Kubernetes Indexed Job parses as YAML, runs the image the Dockerfile builds, shards by
//! `JOB_COMPLETION_INDEX` over as many shards as it has completions; the Slurm recipe is the
//! file scripts/slurm-e2e.sh submits, and the README points at both rather than holding copies.
//! (The Job was not run on a cluster; the Slurm file is run by scripts/slurm-e2e.sh in CI.)

mod common;
use common::*;
use yaml_rust2::{Yaml, YamlLoader};

fn read(p: &str) -> String {
    std::fs::read_to_string(root().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The image tag the Dockerfile's header says to build (`docker build -t IMAGE .`).
fn dockerfile_tag(dockerfile: &str) -> String {
    dockerfile
        .lines()
        .find_map(|l| l.split("docker build -t ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the Dockerfile names its tag: docker build -t IMAGE .")
        .to_string()
}

#[test]
fn the_indexed_job_parses_and_runs_the_image_the_dockerfile_builds() {
    let text = read("deploy/k8s-indexed-job.yaml");
    let docs = YamlLoader::load_from_str(&text).expect("deploy/k8s-indexed-job.yaml is YAML");
    assert_eq!(docs.len(), 1, "one document");
    let job = &docs[0];
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(job["kind"].as_str(), Some("Job"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let n = spec["completions"].as_i64().expect("completions");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let containers = pod["containers"].as_vec().expect("containers");
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    let dockerfile = read("Dockerfile");
    let tag = dockerfile_tag(&dockerfile);
    assert_eq!(
        c["image"].as_str(),
        Some(tag.as_str()),
        "the image the Dockerfile builds"
    );
    let command: Vec<String> = c["command"]
        .as_vec()
        .into_iter()
        .flatten()
        .chain(c["args"].as_vec().into_iter().flatten())
        .filter_map(Yaml::as_str)
        .map(str::to_string)
        .collect();
    let line = command.join(" ");
    assert!(
        line.contains(&format!("--shard \"$JOB_COMPLETION_INDEX/{n}\"")),
        "shards by JOB_COMPLETION_INDEX over `completions` ({n}) shards: {line}"
    );
    assert!(
        line.contains("faultline scan") && line.contains("-o "),
        "{line}"
    );
    // every volume a container mounts is declared, and the archive is mounted read-only
    let volumes: Vec<&str> = pod["volumes"]
        .as_vec()
        .expect("volumes")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for m in c["volumeMounts"].as_vec().expect("volumeMounts") {
        let name = m["name"].as_str().unwrap();
        assert!(volumes.contains(&name), "volume {name} not declared");
        if m["mountPath"].as_str() == Some("/archive") {
            assert_eq!(
                m["readOnly"].as_bool(),
                Some(true),
                "the archive is read-only"
            );
        }
    }
    // the Dockerfile: a build stage in a Rust image, a slim Debian runtime with the dist binary
    let froms: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(froms[0].starts_with("FROM rust:") && froms[0].ends_with(" AS build"));
    assert!(froms[1].starts_with("FROM debian:") && froms[1].contains("slim"));
    assert!(dockerfile.contains("--profile dist"));
    assert!(dockerfile.contains("COPY --from=build /src/target/dist/faultline "));
    assert!(
        read("Cargo.toml").contains("[profile.dist]"),
        "the dist profile exists"
    );
}

#[test]
fn the_readme_points_at_the_recipe_files_instead_of_copies() {
    // the cluster recipes are a chapter of the docs that README links
    let readme = read("docs/fleet.md");
    assert!(read("README.md").contains("docs/fleet.md"));
    for f in [
        "scripts/slurm-array.sbatch",
        "deploy/k8s-indexed-job.yaml",
        "Dockerfile",
    ] {
        assert!(readme.contains(f), "README.md names {f}");
        assert!(root().join(f).is_file(), "{f} exists");
    }
    assert!(
        !readme.contains("#SBATCH --array") && !readme.contains("completionMode: Indexed"),
        "README.md holds a copy of a recipe: point at the file"
    );
    assert!(
        readme.contains("not run on a Kubernetes cluster"),
        "README.md says the Job was not run on a cluster"
    );
    let sbatch = read("scripts/slurm-array.sbatch");
    assert!(sbatch.contains("--shard \"$K/$N\""), "{sbatch}");
    assert!(read("scripts/slurm-e2e.sh").contains("scripts/slurm-array.sbatch"));
}
