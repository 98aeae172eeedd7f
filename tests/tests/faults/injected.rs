//! Fault tests: the store fails writes, the event bus goes down, an intent always fails until its
//! cause is fixed. Real processes where operators would use them (`seatclaimctl`), and each test
//! ends with the audit passing.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashMap;
use std::time::Duration;

use seatclaim_core::domain::JobId;
use seatclaim_e2e::faults::FaultSettings;
use seatclaim_e2e::{AppOptions, TestApp, check_invariants, eventually, test_backend};
use seatclaim_runtime::config::BackendKind;
use serde_json::{Value, json};

/// A marker file whose existence switches the faults on; deleting it "fixes the cause".
fn switch() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("faulty");
    std::fs::write(&path, "on").unwrap();
    (dir, path)
}

fn intents(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| match i % 3 {
            0 => json!({"buyer_id": format!("b{i}"), "seat_ids": [format!("A-1-{}", i % 10 + 1)]}),
            1 => json!({"buyer_id": format!("b{i}"), "seat_ids": [format!("A-2-{}", i % 10 + 1), format!("A-3-{}", i % 10 + 1)]}),
            _ => json!({"buyer_id": format!("b{i}"), "section": "A", "quantity": 1}),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_store_writes_are_retried_and_lose_or_double_nothing() {
    let count = match test_backend() {
        BackendKind::Embedded => 150,
        BackendKind::Aws => 60,
    };
    let faults = FaultSettings {
        store_failure_rate: 0.3,
        ..FaultSettings::default()
    };
    let app = TestApp::spawn_with(AppOptions {
        faults,
        max_attempts: 20,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 4, 10, 300).await;
    let mut job_ids = Vec::new();
    for (n, body) in intents(count).iter().enumerate() {
        job_ids.push(app.reserve_ok("e1", &format!("k{n}"), body).await);
    }
    let mut jobs = Vec::new();
    for id in &job_ids {
        jobs.push(app.decided(id, Duration::from_secs(120)).await);
    }
    let tally = check_invariants(&jobs, &app.seat_map("e1").await);
    assert_eq!(tally.held + tally.rejected, count, "{tally:?}");
    let mut injected = 0;
    for id in &job_ids {
        let job = app
            .backend
            .jobs
            .job(JobId::parse(id).unwrap())
            .await
            .unwrap()
            .unwrap();
        injected += usize::from(
            job.first_error
                .as_deref()
                .is_some_and(|e| e.contains("injected fault")),
        );
    }
    assert!(injected > 0, "the faults were injected");
    app.assert_audit_passes("e1");
    eprintln!(
        "store failures: {count} intents, {injected} met injected write failures, {} held, {} rejected, audit passed",
        tally.held, tally.rejected
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_event_bus_is_down_claims_go_on_and_events_wait_in_the_outbox() {
    let (_dir, path) = switch();
    let faults = FaultSettings {
        bus_down: true,
        fault_while: Some(path.clone()),
        ..FaultSettings::default()
    };
    let app = TestApp::spawn_with(AppOptions {
        faults,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 2, 10, 300).await;
    let count = 20;
    let mut job_ids = Vec::new();
    for n in 0..count {
        let body = json!({"buyer_id": format!("b{n}"), "seat_ids": [format!("A-{}-{}", n / 10 + 1, n % 10 + 1)]});
        job_ids.push(app.reserve_ok("e1", &format!("k{n}"), &body).await);
    }
    for id in &job_ids {
        assert_eq!(
            app.decided(id, Duration::from_secs(60)).await["status"],
            "HELD"
        );
    }
    assert_nothing_is_published(&app, count).await;
    let (lagging, _) = app.ctl(&["audit", "e1", "--max-outbox-lag", "0s"]);
    assert_eq!(lagging, 1, "the audit notices the waiting events");

    std::fs::remove_file(&path).unwrap();
    let per_job = published_after_recovery(&app, count).await;
    assert_eq!(per_job.len(), count);
    assert!(
        per_job.values().all(|n| *n == 1),
        "each event published once: {per_job:?}"
    );
    app.assert_audit_passes("e1");
}

/// With the `count` decisions in the outbox and the bus down, a relay round fails, and nothing
/// is published or marked (every event still waits; after recovery each is published once).
/// The outbox is looked at with `oldest_unpublished`, which takes no shard lease.
async fn assert_nothing_is_published(app: &TestApp, count: usize) {
    assert!(count > 0);
    let waiting = app.backend.outbox.oldest_unpublished().await.unwrap();
    assert!(waiting.is_some(), "the decisions wait in the outbox");
    assert!(
        seatclaim_runtime::loops::relay_once(&app.backend)
            .await
            .is_err(),
        "the relay cannot publish while the bus is down"
    );
    assert_eq!(
        app.backend.outbox.oldest_unpublished().await.unwrap(),
        waiting,
        "the oldest event still waits in the outbox"
    );
    assert!(
        app.published_events().await.is_empty(),
        "nothing is published while the bus is down"
    );
}

/// Waits for the outbox to drain and the `count` events to arrive; returns how many times each
/// job's event was published. Once the outbox is empty the relay has nothing left to publish, so
/// any duplicate publication has happened by then.
async fn published_after_recovery(app: &TestApp, count: usize) -> HashMap<String, usize> {
    eventually(
        Duration::from_secs(60),
        "the outbox to drain after recovery",
        || async {
            // `oldest_unpublished` only looks: `unpublished` would lease shards from the worker.
            let left = app.backend.outbox.oldest_unpublished().await.unwrap();
            left.is_none().then_some(())
        },
    )
    .await;
    let published = eventually(
        Duration::from_secs(60),
        "every event to reach the consumer",
        || async {
            let published = app.published_events().await;
            (published.len() >= count).then_some(published)
        },
    )
    .await;
    let mut per_job: HashMap<String, usize> = HashMap::new();
    for event in published {
        *per_job
            .entry(event["detail"]["job_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    per_job
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intent_that_always_fails_is_dead_lettered_and_a_replay_resolves_it_once_fixed() {
    let (_dir, path) = switch();
    let faults = FaultSettings {
        failing_buyer: Some("poison".into()),
        fault_while: Some(path.clone()),
        ..FaultSettings::default()
    };
    let app = TestApp::spawn_with(AppOptions {
        faults,
        max_attempts: 2,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let healthy = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "fine", "seat_ids": ["A-1-1"]}),
        )
        .await;
    let poisoned = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "poison", "seat_ids": ["A-1-2"]}),
        )
        .await;
    assert_eq!(
        app.decided(&healthy, Duration::from_secs(30)).await["status"],
        "HELD"
    );
    let failed = app.decided(&poisoned, Duration::from_secs(60)).await;
    assert_eq!(failed["status"], "FAILED");
    assert_eq!(
        failed["reason"], "processing failed; the request will not be retried",
        "the buyer sees no internals"
    );
    let id = seatclaim_core::domain::JobId::parse(&poisoned).unwrap();
    let reason = app.backend.jobs.job(id).await.unwrap().unwrap().reason;
    assert!(
        reason
            .as_deref()
            .unwrap_or_default()
            .contains("injected fault"),
        "operators see the error: {reason:?}"
    );

    let listed = eventually(Duration::from_secs(20), "the DLQ listing", || async {
        let listed = dead_letter_list(&app);
        (!listed.is_empty()).then_some(listed)
    })
    .await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["job_id"], poisoned.as_str());
    assert_eq!(listed[0]["buyer_id"], "poison");
    assert!(
        listed[0]["first_failure"]
            .as_str()
            .unwrap()
            .contains("injected fault"),
        "{}",
        listed[0]
    );

    let (dry, stdout) = app.ctl(&["dlq", "replay", "--job", &poisoned, "--dry-run", "--json"]);
    assert_eq!(dry, 0);
    assert_eq!(
        serde_json::from_str::<Value>(stdout.trim()).unwrap()["replayed"],
        1
    );
    assert_eq!(
        app.job(&poisoned).await["status"],
        "FAILED",
        "a dry run changes nothing"
    );

    std::fs::remove_file(&path).unwrap();
    let (code, stdout) = app.ctl(&["dlq", "replay", "--job", &poisoned, "--json"]);
    assert_eq!(code, 0, "{stdout}");
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        (summary["replayed"].as_u64(), summary["reopened"].as_u64()),
        (Some(1), Some(1))
    );
    let resolved = app.decided(&poisoned, Duration::from_secs(60)).await;
    assert_eq!(resolved["status"], "HELD", "{resolved}");

    let (_, history) = app.ctl(&["jobs", "show", &poisoned, "--json"]);
    let history: Value = serde_json::from_str(history.trim()).unwrap();
    let statuses: Vec<&str> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["FAILED", "PENDING", "HELD"]);
    let (again, stdout) = app.ctl(&["dlq", "replay", "--all", "--json"]);
    assert_eq!(
        (
            again,
            serde_json::from_str::<Value>(stdout.trim()).unwrap()["replayed"].as_u64()
        ),
        (0, Some(0))
    );
    app.assert_audit_passes("e1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_dead_letters_are_purged_only_with_confirmation() {
    let faults = FaultSettings {
        failing_buyer: Some("poison".into()),
        ..FaultSettings::default()
    };
    let app = TestApp::spawn_with(AppOptions {
        faults,
        max_attempts: 1,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let job = app
        .reserve_ok(
            "e1",
            "k",
            &json!({"buyer_id": "poison", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(
        app.decided(&job, Duration::from_secs(60)).await["status"],
        "FAILED"
    );
    listed_dead_letters(&app, 1).await;

    let (unconfirmed, _) = app.ctl(&["dlq", "purge", "--older-than", "0s"]);
    assert_eq!(unconfirmed, 2, "nothing is purged without --yes");
    assert_eq!(dead_letter_list(&app).len(), 1);
    let (recent, stdout) = app.ctl(&["dlq", "purge", "--older-than", "1h", "--yes", "--json"]);
    assert_eq!(
        (
            recent,
            serde_json::from_str::<Value>(stdout.trim()).unwrap()["purged"].as_u64()
        ),
        (0, Some(0))
    );
    // That purge held the letter while it looked, then gave it back: it is listed again.
    listed_dead_letters(&app, 1).await;
    let (code, stdout) = app.ctl(&["dlq", "purge", "--older-than", "0s", "--yes", "--json"]);
    assert_eq!(
        (
            code,
            serde_json::from_str::<Value>(stdout.trim()).unwrap()["purged"].as_u64()
        ),
        (0, Some(1))
    );
    assert_eq!(
        dead_letter_list(&app),
        Vec::<Value>::new(),
        "an empty DLQ lists as []"
    );
    assert_eq!(
        app.job(&job).await["status"],
        "FAILED",
        "purging does not touch the job"
    );
}

/// `seatclaimctl dlq list --json`: one JSON array on standard output, whatever the queue holds.
fn dead_letter_list(app: &TestApp) -> Vec<Value> {
    let (code, stdout) = app.ctl(&["dlq", "list", "--json"]);
    assert_eq!(code, 0, "{stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not one JSON array ({e}): {stdout:?}"))
}

/// Waits until `seatclaimctl dlq list` shows `count` dead letters (on SQS a dead letter may be
/// in transit to the DLQ, or held by a command that listed it, for a moment).
async fn listed_dead_letters(app: &TestApp, count: usize) {
    eventually(
        Duration::from_secs(20),
        &format!("{count} dead letter(s) in `seatclaimctl dlq list`"),
        || async { (dead_letter_list(app).len() == count).then_some(()) },
    )
    .await;
}
