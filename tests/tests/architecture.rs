//! The layering of docs/design.md, checked on the workspace: each crate depends only on the
//! crates below it (Cargo then refuses any code that names a layer above), only the backends' own
//! crates link an AWS SDK or SQLite, no product code depends on the build profile or names
//! fault injection, and no two modules of a crate import each other (`module_cycles.rs`). A
//! change that breaks a rule fails here, naming the crate or the line that broke it.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod module_cycles;
mod module_tree;
mod rust_paths;
mod rust_tokens;

use std::path::{Path, PathBuf};

use serde_json::Value;

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The workspace crates each crate may depend on. The core names no backend; each backend
/// depends on the core alone; the runtime composes them; the binaries sit on the runtime, and
/// the API never on the worker.
const MAY_DEPEND_ON: &[(&str, &[&str])] = &[
    ("seatclaim-core", &[]),
    ("seatclaim-embedded", &["seatclaim-core"]),
    ("seatclaim-aws", &["seatclaim-core"]),
    (
        "seatclaim-runtime",
        &["seatclaim-core", "seatclaim-embedded", "seatclaim-aws"],
    ),
    ("seatclaim-worker", &["seatclaim-runtime"]),
    ("seatclaimctl", &["seatclaim-core", "seatclaim-runtime"]),
    ("seatclaim-api", &["seatclaim-core", "seatclaim-runtime"]),
    (
        "seatclaim-e2e",
        &[
            "seatclaim-api",
            "seatclaim-aws",
            "seatclaim-core",
            "seatclaim-embedded",
            "seatclaim-runtime",
            "seatclaim-worker",
        ],
    ),
];

/// The crates that may link a backend's own libraries (the test crate drives the emulators and
/// reads SQLite files directly).
const MAY_LINK_BACKENDS: &[&str] = &["seatclaim-embedded", "seatclaim-aws", "seatclaim-e2e"];

/// The workspace's own packages, as `cargo metadata --no-deps` describes them.
fn workspace_metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(WORKSPACE)
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata failed");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Each workspace crate with the names of its normal and build dependencies.
fn workspace_dependencies() -> Vec<(String, Vec<String>)> {
    workspace_metadata()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| {
            let dependencies = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|dependency| dependency["kind"] != "dev")
                .map(|dependency| dependency["name"].as_str().unwrap().to_owned())
                .collect();
            (package["name"].as_str().unwrap().to_owned(), dependencies)
        })
        .collect()
}

/// The dependencies that break a rule, as `crate -> dependency`.
fn broken_dependencies(crates: &[(String, Vec<String>)]) -> Vec<String> {
    let mut broken = Vec::new();
    for (name, dependencies) in crates {
        let Some((_, allowed)) = MAY_DEPEND_ON.iter().find(|(rule, _)| rule == name) else {
            broken.push(format!("{name} has no rule in MAY_DEPEND_ON; add one"));
            continue;
        };
        for dependency in dependencies {
            let ours = dependency.starts_with("seatclaim");
            let backend = ["aws-sdk-", "aws-config", "rusqlite"]
                .iter()
                .any(|prefix| dependency.starts_with(prefix));
            if (ours && !allowed.contains(&dependency.as_str()))
                || (backend && !MAY_LINK_BACKENDS.contains(&name.as_str()))
            {
                broken.push(format!("{name} -> {dependency}"));
            }
        }
    }
    broken
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let broken = broken_dependencies(&workspace_dependencies());
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn the_layering_check_sees_a_broken_rule() {
    let crates =
        |name: &str, dependency: &str| vec![(name.to_owned(), vec![dependency.to_owned()])];
    assert!(broken_dependencies(&crates("seatclaim-core", "seatclaim-core")).len() == 1);
    assert!(broken_dependencies(&crates("seatclaim-api", "seatclaim-worker")).len() == 1);
    assert!(broken_dependencies(&crates("seatclaim-runtime", "rusqlite")).len() == 1);
    assert!(broken_dependencies(&crates("seatclaim-aws", "aws-sdk-sqs")).is_empty());
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The lines of a file before its unit tests, numbered from 1.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|line| !line.contains("#[cfg(test)]"))
        .enumerate()
        .map(|(i, line)| (i + 1, line.to_owned()))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .collect()
}

/// The product code's lines that name any of `names`, as `file:line: text`.
fn product_lines_naming(names: &[&str]) -> Vec<String> {
    let root = Path::new(WORKSPACE);
    let mut found = Vec::new();
    for dir in ["shared", "api/src", "worker"] {
        for file in rust_files(&root.join(dir)) {
            for (number, line) in code_lines(&file) {
                if names.iter().any(|name| line.contains(name)) {
                    found.push(format!("{}:{number}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    found
}

/// CI builds and lints the debug profile only; the Dockerfile's release build compiles the
/// same code as long as none of it depends on the profile.
#[test]
fn no_product_code_depends_on_the_build_profile() {
    let broken = product_lines_naming(&["debug_assertions"]);
    assert!(
        broken.is_empty(),
        "code that compiles differently in release:\n{}",
        broken.join("\n")
    );
}

/// Fault injection is the test crate's alone (`tests/src/faults/`); the binaries scanned in
/// `faults/shipped.rs` hold none because no product code names it.
#[test]
fn no_product_code_names_a_fault_setting() {
    let broken = product_lines_naming(&["SEATCLAIM_FAULT_", "FaultSettings"]);
    assert!(
        broken.is_empty(),
        "fault injection in product code:\n{}",
        broken.join("\n")
    );
}

/// The test binary's folder, `tests/tests`.
fn suites_folder() -> PathBuf {
    Path::new(WORKSPACE).join("tests/tests")
}

/// Every module file of the test binary but its root: `tests/tests/**/*.rs` but `main.rs`.
fn module_files() -> Vec<PathBuf> {
    let root = suites_folder().join("main.rs");
    let mut files: Vec<PathBuf> = rust_files(&suites_folder())
        .into_iter()
        .filter(|file| *file != root)
        .collect();
    files.sort();
    files
}

/// The file that declares `file` as a module: `a/b.rs` for `a/b/c.rs`, `main.rs` at the top.
fn parent_of(file: &Path) -> PathBuf {
    let folder = file.parent().unwrap();
    if folder == suites_folder() {
        folder.join("main.rs")
    } else {
        folder.with_extension("rs")
    }
}

/// What a module's header says of the backends its tests run on (`tests/run.sh` reruns the
/// "both" ones on AWS), if it says.
fn said_backends(file: &Path) -> Option<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .find(|line| line.starts_with("//! Backends: "))
        .map(str::to_owned)
}

/// Whether a module starts an app on the backend `SEATCLAIM_TEST_BACKEND` names.
fn starts_an_app(file: &Path) -> bool {
    let text = std::fs::read_to_string(file).unwrap();
    // Spelled in two pieces, so that this file does not match itself.
    [concat!("TestApp", "::spawn"), concat!("test_", "backend()")]
        .iter()
        .any(|call| text.contains(call))
}

#[test]
fn every_suite_that_starts_an_app_says_which_backends_it_runs_on() {
    let root = suites_folder().join("main.rs");
    let silent: Vec<String> = module_files()
        .into_iter()
        .filter(|file| starts_an_app(file))
        .filter(|file| {
            // The module itself, or the suite it belongs to, says.
            let mut at = file.clone();
            while at != root {
                if said_backends(&at).is_some() {
                    return false;
                }
                at = parent_of(&at);
            }
            true
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        silent.is_empty(),
        "say \"//! Backends: both\" (rerun on AWS) or \"//! Backends: embedded only\" in the suite of {silent:?}"
    );
    let both = module_files()
        .iter()
        .filter(|file| said_backends(file).is_some_and(|line| line.contains("both")))
        .count();
    assert!(both >= 10, "the AWS rerun lost its suites: {both}");
}

/// The binary lists its modules by hand (`autotests = false`): a file no module declares would
/// never compile, let alone run.
#[test]
fn every_file_is_a_module_of_the_test_binary() {
    let missing: Vec<String> = module_files()
        .iter()
        .filter(|file| {
            let name = file.file_stem().unwrap().to_string_lossy();
            let parent = std::fs::read_to_string(parent_of(file)).unwrap_or_default();
            !parent
                .lines()
                .any(|line| line.trim() == format!("mod {name};"))
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(missing.is_empty(), "no module declares {missing:?}");
    assert!(module_files().len() >= 50, "the suites were not found");
}
