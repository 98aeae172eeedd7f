//! Several `seatclaim-worker` processes deciding one sale at once, over real HTTP: a waitlist
//! served by racing sweepers (`waitlist.rs`), buyers racing for seats together
//! (`together.rs`), buyers confirming priced holds unpaid while the claim runs
//! (`unpaid.rs`), and a thousand buyers racing on one presale code (`presale.rs`).
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod presale;
mod together;
mod unpaid;
mod waitlist;

use seatclaim_e2e::{AppOptions, ChildProcess, TestApp};
use serde_json::Value;

/// Worker processes in each race.
const WORKERS: usize = 3;

/// A worker process's environment on the app's backend, with quick timings.
fn worker_env(app: &TestApp) -> Vec<(&'static str, String)> {
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".into()),
        ("SEATCLAIM_RELAY_INTERVAL_MS", "50".into()),
        ("SEATCLAIM_SWEEP_INTERVAL_MS", "100".into()),
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".into()),
    ]);
    env
}

/// An app without a worker of its own, its event `event` created, and [`WORKERS`] worker
/// processes deciding its intents (stopped when dropped).
async fn sale_with_workers(event: Value) -> (TestApp, Vec<ChildProcess>) {
    sale_with_workers_as(AppOptions::default(), event).await
}

/// [`sale_with_workers`] with the API configured as `options` say (less its worker).
async fn sale_with_workers_as(options: AppOptions, event: Value) -> (TestApp, Vec<ChildProcess>) {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        decide_on_admission: false,
        ..options
    })
    .await;
    let created = app.create_event(&event).await;
    assert_eq!(created.status.as_u16(), 201, "{}", created.text());
    let workers = (0..WORKERS)
        .map(|_| ChildProcess::start("seatclaim-worker", &worker_env(&app)))
        .collect();
    (app, workers)
}
