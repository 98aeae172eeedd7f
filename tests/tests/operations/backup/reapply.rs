//! `seatclaimctl restore` re-applies what `events.jsonl` published after the backup: a seat
//! sold and a seat held after it are SOLD and HELD again, each with its job (readable through
//! the API, the hold until its own deadline), a cancel after it gives its seat back, and a
//! second restore of the same backup gives the same state and the same report. The API binary
//! is started and killed, `seatclaimctl` runs as a process.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashMap;
use std::path::Path;

use reqwest::{Client, StatusCode};
use seatclaim_e2e::eventually;
use serde_json::{Value, json};

use super::{WITHIN, ctl, decided, start_api};

/// Asks for `seat` as `buyer`: the job's id once it is decided.
async fn reserve(client: &Client, base: &str, buyer: &str, seat: &str) -> (String, Value) {
    let response = client
        .post(format!("{base}/v1/events/e1/reservations"))
        .header("Idempotency-Key", format!("{buyer}-{seat}"))
        .json(&json!({"buyer_id": buyer, "seat_ids": [seat]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let body: Value = response.json().await.unwrap();
    let job = body["job_id"].as_str().unwrap().to_owned();
    let view = decided(base, &job).await;
    (job, view)
}

/// Asks for `seat` as `buyer`: the job, HELD.
async fn hold(client: &Client, base: &str, buyer: &str, seat: &str) -> String {
    let (job, view) = reserve(client, base, buyer, seat).await;
    assert_eq!(view["status"], "HELD", "{view}");
    job
}

async fn settle(client: &Client, base: &str, job: &str, action: &str) {
    let response = client
        .post(format!("{base}/v1/jobs/{job}/{action}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{action} {job}");
}

async fn job_view(client: &Client, base: &str, job: &str) -> Value {
    let response = client
        .get(format!("{base}/v1/jobs/{job}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "job {job} is readable");
    response.json().await.unwrap()
}

/// Each job's last status in the folder's published log.
fn published(dir: &Path) -> HashMap<String, String> {
    let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap_or_default();
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| {
            let detail = &line["detail"];
            Some((
                detail["job_id"].as_str()?.to_owned(),
                detail["status"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// `restore --json` of `backup` into `dir`: its report.
fn restore(dir: &Path, backup: &Path) -> Value {
    let (code, out, err) = ctl(dir, &["restore", "--json", backup.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&out).unwrap()
}

/// The jobs as `seatclaimctl jobs show` reads them from the folder, with their histories.
fn stored(dir: &Path, jobs: &[&str]) -> Vec<Value> {
    jobs.iter()
        .map(|job| {
            let (code, out, err) = ctl(dir, &["jobs", "show", job, "--json"]);
            assert_eq!(code, 0, "{out}{err}");
            serde_json::from_str(&out).unwrap()
        })
        .collect()
}

/// The seats' states on the API's seat map, by seat.
async fn seat_map(client: &Client, base: &str) -> HashMap<String, String> {
    let map: Value = client
        .get(format!("{base}/v1/events/e1/seats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let text = |key: &str| s[key].as_str().unwrap().to_owned();
            (text("seat_id"), text("state"))
        })
        .collect()
}

/// Each re-applied job's status and whether it was recreated, by job.
fn reapplied(report: &Value) -> HashMap<String, (String, bool)> {
    report["reapplied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            let text = |key: &str| job[key].as_str().unwrap().to_owned();
            (text("job_id"), (text("status"), job["created"] == true))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_reapplies_the_sales_holds_and_cancels_published_after_the_backup() {
    let (live, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (api, base) = start_api(live.path());
    let client = Client::new();
    let event = json!({"event_id": "e1", "name": "reapply", "hold_seconds": 600,
        "sections": [{"section": "A", "rows": 1, "seats_per_row": 6}]});
    let created = client
        .post(format!("{base}/v1/events"))
        .json(&event)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let kept = hold(&client, &base, "b-kept", "A-1-4").await;
    let cancelled = hold(&client, &base, "b-cancel", "A-1-3").await;
    let backup = elsewhere.path().join("seatclaim.backup");
    let (code, out, err) = ctl(live.path(), &["backup", backup.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");

    // After the backup: a sale, a hold and a cancel, all published before the API goes.
    let sold = hold(&client, &base, "b-sold", "A-1-1").await;
    settle(&client, &base, &sold, "confirm").await;
    let held = hold(&client, &base, "b-held", "A-1-2").await;
    settle(&client, &base, &cancelled, "cancel").await;
    let deadline = job_view(&client, &base, &held).await["hold_expires_at"].clone();
    let expected = [(&sold, "SOLD"), (&held, "HELD"), (&cancelled, "CANCELLED")];
    eventually(WITHIN, "the sale, hold and cancel published", || async {
        let log = published(live.path());
        expected
            .iter()
            .all(|(job, status)| log.get(job.as_str()).is_some_and(|s| s == status))
            .then_some(())
    })
    .await;
    drop(api);

    let first = restore(live.path(), &backup);
    let jobs = [
        sold.as_str(),
        held.as_str(),
        cancelled.as_str(),
        kept.as_str(),
    ];
    let state = stored(live.path(), &jobs);
    // Idempotent: the same backup again gives the same state, and says the same.
    let second = restore(live.path(), &backup);
    assert_eq!(second, first);
    assert_eq!(stored(live.path(), &jobs), state);

    let (_api, base) = start_api(live.path());
    let sold_view = job_view(&client, &base, &sold).await;
    assert_eq!(sold_view["status"], "SOLD", "{sold_view}");
    assert_eq!(sold_view["seat_ids"], json!(["A-1-1"]), "{sold_view}");
    let held_view = job_view(&client, &base, &held).await;
    assert_eq!(held_view["status"], "HELD", "{held_view}");
    assert_eq!(
        held_view["hold_expires_at"], deadline,
        "held until its own deadline"
    );
    let cancelled_view = job_view(&client, &base, &cancelled).await;
    assert_eq!(cancelled_view["status"], "CANCELLED", "{cancelled_view}");
    assert_eq!(job_view(&client, &base, &kept).await["status"], "HELD");
    let seats = [
        ("A-1-1", "SOLD"),
        ("A-1-2", "HELD"),
        ("A-1-3", "AVAILABLE"),
        ("A-1-4", "HELD"),
    ];
    eventually(WITHIN, "the seat map as published", || async {
        let map = seat_map(&client, &base).await;
        seats
            .iter()
            .all(|(seat, state)| map.get(*seat).is_some_and(|s| s == state))
            .then_some(())
    })
    .await;
    // Nobody gets the seat sold after the backup; the cancelled one is for sale again.
    let (_, late) = reserve(&client, &base, "b-late", "A-1-1").await;
    assert_eq!(late["status"], "REJECTED", "{late}");
    hold(&client, &base, "b-late", "A-1-3").await;

    // The restore said what it re-applied: the two jobs it recreated and the cancel.
    let again = reapplied(&first);
    assert_eq!(again[&sold], ("SOLD".into(), true), "{first}");
    assert_eq!(again[&held], ("HELD".into(), true), "{first}");
    assert_eq!(again[&cancelled], ("CANCELLED".into(), false), "{first}");
    assert_eq!(first["not_reapplied"], json!([]), "{first}");
}
