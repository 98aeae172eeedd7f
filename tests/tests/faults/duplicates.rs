//! Every message delivered three times, out of order: the outcomes are those of single delivery.
//! (In a process of its own: it reads the process's metrics, which no other test may disturb.)
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::time::Duration;

use seatclaim_e2e::faults::FaultSettings;
use seatclaim_e2e::{AppOptions, TestApp, check_invariants, eventually, run_in_own_process};
use serde_json::{Value, json};

const UNCONTENDED: usize = 20;
const CONTENDED_SEATS: usize = 10;

/// Buyers 0..20 want seats of their own (row 1); buyers 20..40 race in pairs for row 2's seats.
fn requests() -> Vec<Value> {
    let own = (0..UNCONTENDED)
        .map(|n| json!({"buyer_id": format!("b{n}"), "seat_ids": [format!("A-1-{}", n + 1)]}));
    let raced = (0..CONTENDED_SEATS * 2)
        .map(|n| json!({"buyer_id": format!("r{n}"), "seat_ids": [format!("A-2-{}", n / 2 + 1)]}));
    own.chain(raced).collect()
}

async fn run(app: &TestApp) -> Vec<Value> {
    app.create_grid("e1", 2, 20, 300).await;
    let mut ids = Vec::new();
    for (n, body) in requests().iter().enumerate() {
        ids.push(app.reserve_ok("e1", &format!("k{n}"), body).await);
    }
    let mut jobs = Vec::new();
    for id in &ids {
        jobs.push(app.decided(id, Duration::from_secs(60)).await);
    }
    jobs
}

/// The process's count of claims with this outcome (both apps of the test share the recorder).
fn claims(metrics: &str, outcome: &str) -> usize {
    let label = format!("outcome=\"{outcome}\"");
    metrics
        .lines()
        .find(|line| line.starts_with("seatclaim_claims_total") && line.contains(&label))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn duplicated_and_reordered_delivery_changes_no_outcome() {
    run_in_own_process(module_path!(), "duplicates_in_a_process_of_their_own");
}

/// The claims counted below are the test process's, for both apps and no other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run in a process of its own by duplicated_and_reordered_delivery_changes_no_outcome"]
async fn duplicates_in_a_process_of_their_own() {
    let single = TestApp::spawn().await;
    let once = run(&single).await;
    let faults = FaultSettings {
        duplicate_deliveries: 2,
        ..FaultSettings::default()
    };
    let tripled = TestApp::spawn_with(AppOptions {
        faults,
        ..AppOptions::default()
    })
    .await;
    let thrice = run(&tripled).await;

    // Every extra copy arrives (after a random delay of up to a second) and is acknowledged as
    // already decided. The queue is at-least-once, so it may deliver a copy more than that (a lost
    // acknowledgement brings its message back); what no delivery may do is decide a job again.
    // A copy may be acknowledged as already decided a moment before the claim that decided it
    // counts its own decision: both counts are waited for.
    let expected = requests().len() * 2;
    let decided = |text: &str| claims(text, "held") + claims(text, "rejected");
    let seen = eventually(
        Duration::from_secs(60),
        &format!(
            "{expected} duplicates acknowledged as already decided, and every decision counted"
        ),
        || async {
            let text = tripled.metrics().await;
            let seen = claims(&text, "already_decided");
            (seen >= expected && decided(&text) >= requests().len() * 2).then_some(text)
        },
    )
    .await;
    let decisions = decided(&seen);
    assert_eq!(
        decisions,
        requests().len() * 2,
        "each job of the two apps was decided once, however often its intent was delivered"
    );

    for (a, b) in once.iter().zip(&thrice).take(UNCONTENDED) {
        assert_eq!(
            (&a["status"], &a["seat_ids"]),
            (&b["status"], &b["seat_ids"])
        );
    }
    let single_tally = check_invariants(&once, &single.seat_map("e1").await);
    let tripled_tally = check_invariants(&thrice, &tripled.seat_map("e1").await);
    assert_eq!(single_tally, tripled_tally);
    assert_eq!(tripled_tally.held, UNCONTENDED + CONTENDED_SEATS);
    // The relay publishes on its own schedule: wait for one event a job, then check that
    // none came twice.
    let published = tripled
        .published_at_least(requests().len(), Duration::from_secs(60))
        .await;
    assert_eq!(
        published.len(),
        requests().len(),
        "one decision event per job"
    );
    tripled.assert_audit_passes("e1");
    eprintln!(
        "duplicates: {} intents, {expected} extra copies sent, {} deliveries acknowledged as already decided, {tripled_tally:?}, audit passed",
        requests().len(),
        claims(&seen, "already_decided")
    );
}
