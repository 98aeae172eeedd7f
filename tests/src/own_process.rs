//! Every suite runs in one test process (one binary, `tests/tests/main.rs`), and the app's metrics
//! are the process's: a check that reads one exactly (the seat map's rebuild counter, the
//! long-poll gauge, the claims of two apps) would see other tests' apps and decisions. Such a
//! check is an ignored test that a second, ordinary test runs in a child process of the same
//! binary, alone, with [`run_in_own_process`].

use std::process::Command;

/// Runs the ignored test `test` of `module` (the caller's `module_path!()`) in a child process of
/// this test binary, with this process's environment, and fails with the child's output unless
/// that one test ran and passed.
pub fn run_in_own_process(module: &str, test: &str) {
    // The module path starts with the binary's own name, which test names leave out.
    let within = module.split_once("::").map_or("", |(_, within)| within);
    let name = &format!("{within}::{test}");
    let binary = std::env::current_exe().expect("the test binary's own path");
    let output = Command::new(binary)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("the test binary runs again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "{name} failed in its own process:\n{text}"
    );
    assert!(
        text.contains("test result: ok. 1 passed"),
        "{name} did not run in its own process (renamed?):\n{text}"
    );
}
