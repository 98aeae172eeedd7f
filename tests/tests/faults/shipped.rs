//! No fault injection in what ships (issue 37, item 5): the binaries that the README's command and
//! the Dockerfile build at the workspace root name no `SEATCLAIM_FAULT_*` setting, whatever else
//! the workspace holds, while the test crate's own binaries (`seatclaim-faulty-*`) run the same
//! processes and inject the faults those settings name.
//!
//! Backends: embedded only (what is checked is the binaries, not a backend).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, binary, cargo};
use serde_json::{Value, json};

/// The binaries that ship (the README's `cargo run` and the Dockerfile's build).
const SHIPPED: [&str; 3] = ["seatclaim-api", "seatclaim-worker", "seatclaimctl"];

/// What every fault setting's name begins with.
const FAULT_SETTING: &[u8] = b"SEATCLAIM_FAULT_";

/// Builds the shipped binaries at the workspace root as the README and the Dockerfile do (every
/// member selected, so each dependency's features are unified with the test crate's) and returns
/// their paths. The debug profile, since features resolve alike in every profile and a release
/// build takes 11 of CI's minutes; `SEATCLAIM_TEST_RELEASE_BUILD=1` builds the release profile,
/// exactly the README's command.
fn build_shipped() -> Vec<PathBuf> {
    let mut command = cargo();
    command.args([
        "build",
        "--locked",
        "--message-format=json-render-diagnostics",
    ]);
    if std::env::var_os("SEATCLAIM_TEST_RELEASE_BUILD").is_some() {
        command.arg("--release");
    }
    for name in SHIPPED {
        command.args(["--bin", name]);
    }
    let output = command.output().expect("cargo runs");
    assert!(output.status.success(), "the README's build failed");
    let built: Vec<PathBuf> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| {
            SHIPPED
                .iter()
                .any(|name| message["target"]["name"] == *name)
        })
        .filter_map(|message| message["executable"].as_str().map(PathBuf::from))
        .collect();
    assert_eq!(built.len(), SHIPPED.len(), "one executable each: {built:?}");
    built
}

/// Whether the file at `path` holds a fault setting's name anywhere in its bytes.
fn names_a_fault_setting(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .windows(FAULT_SETTING.len())
        .any(|window| window == FAULT_SETTING)
}

#[test]
fn the_shipped_binaries_name_no_fault_setting() {
    let carrying: Vec<PathBuf> = build_shipped()
        .into_iter()
        .filter(|path| names_a_fault_setting(path))
        .collect();
    assert!(
        carrying.is_empty(),
        "shipped binaries that hold fault injection: {carrying:?}"
    );
}

#[test]
fn the_scan_sees_the_fault_settings_of_the_faulty_binaries() {
    for name in ["seatclaim-faulty-api", "seatclaim-faulty-worker"] {
        assert!(names_a_fault_setting(&binary(name)), "{name}");
    }
}

/// The faulty worker is the shipped worker's process with the faults its variables name: a
/// buyer's claims fail until the job is FAILED, while another buyer's seat is held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_faulty_worker_injects_the_faults_its_settings_name() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let mut env = super::crash::worker_env(&app);
    env.extend([
        ("SEATCLAIM_FAULT_FAILING_BUYER", "poison".to_owned()),
        ("SEATCLAIM_MAX_ATTEMPTS", "1".to_owned()),
    ]);
    let worker = ChildProcess::start("seatclaim-faulty-worker", &env);
    worker.wait_for_log("FAULT INJECTION IS ON", Duration::from_secs(30));
    let reserve = |key: &'static str, buyer: &'static str, seat: &'static str| {
        let body = json!({"buyer_id": buyer, "seat_ids": [seat]});
        let app = &app;
        async move { app.reserve_ok("e1", key, &body).await }
    };
    let healthy = reserve("k1", "fine", "A-1-1").await;
    let poisoned = reserve("k2", "poison", "A-1-2").await;
    let wait = Duration::from_secs(30);
    assert_eq!(app.decided(&healthy, wait).await["status"], "HELD");
    assert_eq!(app.decided(&poisoned, wait).await["status"], "FAILED");
    worker.terminate(wait);
}
