//! `seatclaim-loadgen --hs256-secret` against the real `seatclaim-api` binary with authentication
//! on: every buyer's requests carry its own signed token and the run passes the load generator's
//! invariant check; a token signed with another secret is refused at the first request. The
//! benchmark's authentication-on run (tests/bench/run.sh) depends on both.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::process::{Command, Output};
use std::time::Duration;

use seatclaim_e2e::ChildProcess;
use serde_json::Value;

const SECRET: &str = "loadgen-test-secret-of-at-least-32-bytes";

/// The API binary on a fresh embedded folder with HS256 tokens required; returns it and its URL.
fn start_api(folder: &std::path::Path) -> (ChildProcess, String) {
    let env = [
        ("SEATCLAIM_DATA_DIR", folder.display().to_string()),
        ("SEATCLAIM_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_AUTH_HS256_SECRET", SECRET.to_owned()),
        ("RUST_LOG", "info".to_owned()),
    ];
    let api = ChildProcess::start("seatclaim-api", &env);
    let url = api.listening_url(Duration::from_secs(30));
    (api, url)
}

/// A short closed-loop run signed with `secret`, its report written to `json`.
fn loadgen(url: &str, secret: &str, json: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seatclaim-loadgen"))
        .args(["--url", url, "--hs256-secret", secret, "--seats", "200"])
        .args([
            "--concurrency",
            "8",
            "--duration",
            "2s",
            "--quiet",
            "--json",
        ])
        .arg(json)
        .output()
        .expect("the load generator runs")
}

#[test]
fn every_buyer_signs_its_own_requests_and_a_foreign_secret_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let (_api, url) = start_api(folder.path());
    let report = folder.path().join("signed.json");

    let signed = loadgen(&url, SECRET, &report);
    let stdout = String::from_utf8_lossy(&signed.stdout);
    assert!(signed.status.success(), "the signed run failed: {stdout}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["invariants_ok"], true, "{report}");
    assert_eq!(report["http_errors"], serde_json::json!({}), "{report}");
    assert!(report["decided"].as_u64().unwrap() > 0, "{report}");
    assert!(
        report["outcomes"]["HELD"].as_u64().unwrap_or(0) > 0,
        "{report}"
    );

    let foreign = loadgen(
        &url,
        "another-secret-of-at-least-32-bytes",
        &folder.path().join("foreign.json"),
    );
    let stderr = String::from_utf8_lossy(&foreign.stderr);
    assert!(!foreign.status.success(), "a foreign secret was accepted");
    assert!(
        stderr.contains("401"),
        "not refused as unauthenticated: {stderr}"
    );
}
