//! The layering of ARCHITECTURE.md, checked on the source: each layer of `shared` names only the
//! layers below it, one backend's adapter never names the other's, and no code outside the
//! adapters names an AWS SDK or SQLite type, and no product code depends on the build profile.
//! A change that breaks a rule fails here, with the file and the line that broke it.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// What each top-level module of `shared` may name with `crate::`, besides itself.
const MAY_USE: &[(&str, &[&str])] = &[
    ("domain", &[]),
    ("ports", &["domain"]),
    ("codec", &["domain", "ports"]),
    ("app", &["domain", "ports"]),
    ("adapters", &["domain", "ports", "codec", "reports"]),
    // The settings bundle holds each adapter's own settings type.
    ("config", &["adapters", "domain"]),
    ("telemetry", &["config"]),
    ("shutdown", &[]),
    // The services' tokio runtime.
    ("runtime", &[]),
    // The claims a bearer token carries: plain data, shared by the API and seatclaimctl.
    ("identity", &[]),
    // What the embedded backend's file commands did (backup, restore): plain data.
    ("reports", &[]),
    // Composition: the one place that picks adapters (and hands on the domain values they
    // return, such as the events a restore reports).
    (
        "backend",
        &["adapters", "config", "domain", "ports", "reports"],
    ),
];

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

/// The top-level `shared` module a file belongs to (`src/app/decide.rs` -> `app`).
fn layer_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_owned()
}

/// Every `crate::<module>` a line names.
fn crate_paths(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        found.push(name);
    }
    found
}

#[test]
fn each_layer_of_shared_names_only_the_layers_below_it() {
    let src = Path::new(WORKSPACE).join("shared/src");
    let mut broken = Vec::new();
    for file in rust_files(&src) {
        let layer = layer_of(&src, &file);
        if layer == "lib" {
            continue;
        }
        let allowed = MAY_USE
            .iter()
            .find(|(name, _)| *name == layer)
            .unwrap_or_else(|| panic!("{layer} has no rule in MAY_USE; add one"))
            .1;
        for (number, line) in code_lines(&file) {
            for used in crate_paths(&line) {
                if used != layer && !allowed.contains(&used.as_str()) {
                    broken.push(format!("{}:{number}: {layer} names {used}", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn one_backends_adapter_never_names_the_others() {
    let adapters = Path::new(WORKSPACE).join("shared/src/adapters");
    let mut broken = Vec::new();
    for (own, other) in [("aws", "embedded"), ("embedded", "aws")] {
        for file in rust_files(&adapters.join(own)) {
            for (number, line) in code_lines(&file) {
                if line.contains(&format!("adapters::{other}")) {
                    broken.push(format!("{}:{number}", file.display()));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "cross-adapter imports:\n{}",
        broken.join("\n")
    );
}

/// The product code's lines (outside `skip`) that name any of `names`, as `file:line: text`.
fn product_lines_naming(names: &[&str], skip: Option<&Path>) -> Vec<String> {
    let root = Path::new(WORKSPACE);
    let mut found = Vec::new();
    for dir in ["shared/src", "api/src", "worker/src"] {
        for file in rust_files(&root.join(dir)) {
            if skip.is_some_and(|skip| file.starts_with(root.join(skip))) {
                continue;
            }
            for (number, line) in code_lines(&file) {
                if names.iter().any(|name| line.contains(name)) {
                    found.push(format!("{}:{number}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn no_code_outside_the_adapters_names_an_aws_or_sqlite_type() {
    let broken = product_lines_naming(
        &["aws_sdk_", "aws_config", "rusqlite"],
        Some(Path::new("shared/src/adapters")),
    );
    assert!(
        broken.is_empty(),
        "backend types outside adapters:\n{}",
        broken.join("\n")
    );
}

/// CI builds and lints the debug profile only; the Dockerfile's release build compiles the
/// same code as long as none of it depends on the profile.
#[test]
fn no_product_code_depends_on_the_build_profile() {
    let broken = product_lines_naming(&["debug_assertions"], None);
    assert!(
        broken.is_empty(),
        "code that compiles differently in release:\n{}",
        broken.join("\n")
    );
}

/// Whether a suite starts an app on the backend `SEATCLAIM_TEST_BACKEND` names, and what its
/// header says of the backends it runs on (`tests/run.sh` reruns the "both" ones on AWS).
fn backends_line(suite: &Path) -> (bool, Option<String>) {
    let text = std::fs::read_to_string(suite).unwrap();
    // Spelled in two pieces, so that this file does not match itself.
    let starts_an_app = [concat!("TestApp", "::spawn"), concat!("test_", "backend()")]
        .iter()
        .any(|call| text.contains(call));
    let said = text
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .find(|line| line.starts_with("//! Backends: "))
        .map(str::to_owned);
    (starts_an_app, said)
}

#[test]
fn every_suite_that_starts_an_app_says_which_backends_it_runs_on() {
    let tests = Path::new(WORKSPACE).join("tests/tests");
    let mut suites: Vec<PathBuf> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    suites.push(tests.join("openapi/main.rs"));
    let silent: Vec<String> = suites
        .iter()
        .filter(|suite| matches!(backends_line(suite), (true, None)))
        .map(|suite| suite.display().to_string())
        .collect();
    assert!(
        silent.is_empty(),
        "say \"//! Backends: both\" (rerun on AWS) or \"//! Backends: embedded only\" in {silent:?}"
    );
    let both = suites
        .iter()
        .filter(|suite| {
            backends_line(suite)
                .1
                .is_some_and(|line| line.contains("both"))
        })
        .count();
    assert!(both >= 10, "the AWS rerun lost its suites: {both}");
}

#[test]
fn the_checks_see_a_broken_rule() {
    // The parser behind the checks finds what a violating line would name.
    assert_eq!(
        crate_paths("use crate::adapters::aws::DynamoStore; crate::domain::Job"),
        ["adapters", "domain"]
    );
    let src = Path::new("/x/shared/src");
    assert_eq!(layer_of(src, &src.join("app/decide.rs")), "app");
    assert_eq!(layer_of(src, &src.join("config.rs")), "config");
}
