//! Backups of the embedded backend: `seatclaimctl backup` copies a running deployment's
//! database while buyers are posting, the copy restores into a new folder where every intent
//! answered 202 before the backup began is still there and is decided, a restore in place
//! re-applies the decisions published after the backup (`reapply.rs` checks each kind), and
//! `seatclaimctl restore` refuses a folder that a running service has open. All real processes
//! and files.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use seatclaim_e2e::{ChildProcess, binary, eventually};
use serde_json::{Value, json};

mod reapply;

const WITHIN: Duration = Duration::from_secs(60);

/// Runs `seatclaimctl` on the embedded folder `dir`: its exit code, stdout and stderr.
fn ctl(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(binary("seatclaimctl"))
        .args(args)
        .env("SEATCLAIM_BACKEND", "embedded")
        .env("SEATCLAIM_DATA_DIR", dir)
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (
        output.status.code().unwrap_or(-1),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// Starts the API binary (with its in-process worker) on the folder; returns it and its URL.
fn start_api(dir: &Path) -> (ChildProcess, String) {
    let env = [
        ("SEATCLAIM_BACKEND", "embedded".to_owned()),
        ("SEATCLAIM_DATA_DIR", dir.display().to_string()),
        ("SEATCLAIM_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".to_owned()),
        ("RUST_LOG", "info".to_owned()),
    ];
    let api = ChildProcess::start("seatclaim-api", &env);
    let url = api.listening_url(WITHIN);
    (api, url)
}

/// What the posters have been answered 202 for, in order.
type Accepted = Arc<Mutex<Vec<String>>>;

/// Posts one-seat section requests with fresh keys until `stop`, recording each accepted job.
async fn post_until(base: String, poster: usize, accepted: Accepted, stop: Arc<AtomicBool>) {
    let client = reqwest::Client::new();
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let response = client
            .post(format!("{base}/v1/events/e1/reservations"))
            .header("Idempotency-Key", format!("p{poster}-{n}"))
            .json(&json!({"buyer_id": format!("b{poster}-{n}"), "section": "A", "quantity": 1}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        let body: Value = response.json().await.unwrap();
        let job = body["job_id"].as_str().unwrap().to_owned();
        accepted.lock().unwrap().push(job);
    }
}

fn accepted_count(accepted: &Accepted) -> usize {
    accepted.lock().unwrap().len()
}

/// The job as the API at `base` shows it, once it has left PENDING.
async fn decided(base: &str, job: &str) -> Value {
    let client = reqwest::Client::new();
    eventually(WITHIN, &format!("job {job} to be decided"), || async {
        let response = client
            .get(format!("{base}/v1/jobs/{job}?wait=5"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "job {job} exists");
        let job: Value = response.json().await.unwrap();
        (job["status"] != "PENDING").then_some(job)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_under_load_restores_every_intent_accepted_before_it() {
    let (live, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (api, base) = start_api(live.path());
    let created = reqwest::Client::new()
        .post(format!("{base}/v1/events"))
        .json(
            &json!({"event_id": "e1", "name": "backup", "hold_seconds": 600,
            "sections": [{"section": "A", "rows": 20, "seats_per_row": 25}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);

    let (accepted, stop) = (Accepted::default(), Arc::new(AtomicBool::new(false)));
    let posters: Vec<_> = (0..4)
        .map(|p| tokio::spawn(post_until(base.clone(), p, accepted.clone(), stop.clone())))
        .collect();
    eventually(WITHIN, "100 intents accepted", || async {
        (accepted_count(&accepted) >= 100).then_some(())
    })
    .await;
    let before: Vec<String> = accepted.lock().unwrap().clone();
    let file = elsewhere.path().join("seatclaim.backup");
    let (code, out, err) = ctl(live.path(), &["backup", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let after = accepted_count(&accepted);
    eventually(WITHIN, "more intents accepted after the backup", || async {
        (accepted_count(&accepted) > after + 50).then_some(())
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    for poster in posters {
        poster.await.unwrap();
    }
    let all: Vec<String> = accepted.lock().unwrap().clone();
    eprintln!(
        "backup: {} accepted before it began, {after} by its end, {} in all; {}",
        before.len(),
        all.len(),
        out.trim()
    );

    // A running service's folder is never overwritten.
    let (code, out, err) = ctl(live.path(), &["restore", file.to_str().unwrap()]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("is running on"), "{err}");
    let (code, out, err) = ctl(live.path(), &["jobs", "show", all.last().unwrap()]);
    assert_eq!(code, 0, "the live folder keeps its newest job: {out}{err}");
    // The newest job's decision is published before the service goes.
    let newest = all.last().unwrap().clone();
    eventually(WITHIN, "the newest job's event published", || async {
        std::fs::read_to_string(live.path().join("events.jsonl"))
            .is_ok_and(|log| log.contains(&newest))
            .then_some(())
    })
    .await;
    // Once the service is gone (killed: the OS drops its lock), the restore goes ahead, and
    // the folder is back at the backup's moment, the killed process's WAL notwithstanding; then
    // the decisions published after that moment are re-applied: the newest job's among them
    // (recreated, since it was accepted after the backup), and none of a job the posters never
    // had.
    drop(api);
    let (code, out, err) = ctl(live.path(), &["restore", "--json", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let reapplied: Vec<&str> = report["reapplied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["job_id"].as_str().unwrap())
        .collect();
    assert!(reapplied.contains(&newest.as_str()), "{report}");
    assert!(
        reapplied.iter().all(|job| all.iter().any(|a| a == job)),
        "{report}"
    );
    assert_eq!(report["not_reapplied"], json!([]), "{report}");
    let (code, out, err) = ctl(live.path(), &["jobs", "show", &newest]);
    assert_eq!(
        code, 0,
        "a job decided after the backup is back: {out}{err}"
    );
    let (code, out, err) = ctl(live.path(), &["jobs", "show", &before[0]]);
    assert_eq!(code, 0, "{out}{err}");

    // Restored elsewhere, the copy holds every intent answered before the backup began, and
    // the service decides them all; the copy's jobs are all jobs that were accepted.
    let restored = elsewhere.path().join("data");
    let (code, out, err) = ctl(&restored, &["restore", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (_api, base) = start_api(&restored);
    for job in &before {
        let job = decided(&base, job).await;
        assert!(
            ["HELD", "REJECTED"].contains(&job["status"].as_str().unwrap()),
            "{job}"
        );
    }
    let (code, report, err) = ctl(&restored, &["audit", "e1", "--json"]);
    assert_eq!(code, 0, "{report}{err}");
    let report: Value = serde_json::from_str(&report).unwrap();
    let counted: u64 = report["jobs"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    let counted = usize::try_from(counted).unwrap();
    assert!(
        (before.len()..=after).contains(&counted),
        "the copy is one snapshot between {} and {after} jobs: {report}",
        before.len()
    );
}

#[test]
fn backup_and_restore_refuse_what_they_cannot_do_safely() {
    let (dir, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (code, _, err) = ctl(dir.path(), &["backup", "x.backup"]);
    assert_ne!(code, 0);
    assert!(err.contains("has no database to back up"), "{err}");

    let (code, _, err) = ctl(dir.path(), &["init"]);
    assert_eq!(code, 0, "{err}");
    let taken = other.path().join("taken");
    std::fs::write(&taken, "not a database").unwrap();
    let (code, _, err) = ctl(dir.path(), &["backup", taken.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("never overwrites"), "{err}");
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "not a database");

    let (code, _, err) = ctl(dir.path(), &["restore", taken.to_str().unwrap()]);
    assert_ne!(code, 0, "a file that is no database is refused");
    assert!(
        err.contains("not a database") || err.contains("file is not"),
        "{err}"
    );
    let (code, _, err) = ctl(dir.path(), &["restore", "/no/such/backup"]);
    assert_ne!(code, 0);
    assert!(err.contains("is not a backup file"), "{err}");
}

#[test]
fn the_aws_backend_points_to_point_in_time_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(binary("seatclaimctl"))
        .args(["backup", dir.path().join("b").to_str().unwrap()])
        .env("SEATCLAIM_BACKEND", "aws")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("point-in-time recovery"), "{err}");
}
