//! The worker process is SIGKILLed at random moments, several times, and restarted each time:
//! nothing accepted is lost, nothing is decided twice, every seat has at most one holder, and the
//! audit passes at the end.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use seatclaim_e2e::{
    AppOptions, ChildProcess, TestApp, check_invariants, eventually, seeded_rng, test_backend,
};
use seatclaim_runtime::config::BackendKind;
use serde_json::{Value, json};

/// Intents in the run (over 200 seats), kills, and the most batches a worker decides before it is
/// killed (a seeded random number from 1 to that). The emulator is slow, so its run is smaller.
fn shape() -> (usize, usize, u32) {
    match test_backend() {
        BackendKind::Embedded => (2_000, 5, 12),
        BackendKind::Aws => (200, 3, 3),
    }
}

/// The environment of a worker process on `app`'s backend with quick timings (also the faulty
/// worker's, in `shipped.rs`).
pub(super) fn worker_env(app: &TestApp) -> Vec<(&'static str, String)> {
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_VISIBILITY_TIMEOUT_SECS", "1".into()),
        // Batches of 10 (SQS's size): the kills fall between many batches, however the default
        // batch size changes.
        ("SEATCLAIM_BATCH_SIZE", "10".into()),
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".into()),
        ("SEATCLAIM_RELAY_INTERVAL_MS", "50".into()),
        ("SEATCLAIM_SWEEP_INTERVAL_MS", "100".into()),
        ("RUST_LOG", "info".into()),
        // Each test's workers on a port of their own.
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".into()),
    ]);
    env
}

async fn statuses(app: &TestApp, job_ids: &[String]) -> Vec<Value> {
    let mut jobs = Vec::with_capacity(job_ids.len());
    for id in job_ids {
        jobs.push(app.job(id).await);
    }
    jobs
}

fn pending(jobs: &[Value]) -> usize {
    jobs.iter().filter(|j| j["status"] == "PENDING").count()
}

/// Posts `intents` reservations (exact, two-seat and any-in-section, in turn); returns their job ids.
async fn post_intents(app: &TestApp, intents: usize) -> Vec<String> {
    let mut job_ids = Vec::with_capacity(intents);
    for n in 0..intents {
        let body = match n % 3 {
            0 => {
                json!({"buyer_id": format!("b{n}"), "seat_ids": [format!("A-{}-{}", n % 10 + 1, n % 20 + 1)]})
            }
            1 => {
                json!({"buyer_id": format!("b{n}"), "seat_ids": [format!("A-{}-1", n % 10 + 1), format!("A-{}-2", n % 10 + 1)]})
            }
            _ => json!({"buyer_id": format!("b{n}"), "section": "A", "quantity": 2}),
        };
        job_ids.push(app.reserve_ok("e1", &format!("k{n}"), &body).await);
    }
    job_ids
}

/// Starts a worker `kills` times and SIGKILLs it each time after a random number of batches (up to
/// `most_batches`) and a random pause, every choice drawn from the test's seed.
async fn kill_repeatedly(app: &TestApp, job_ids: &[String], kills: usize, most_batches: u32) {
    let mut rng = seeded_rng();
    for kill in 0..kills {
        let worker = ChildProcess::start("seatclaim-worker", &worker_env(app));
        for _ in 0..rng.u32(1..=most_batches) {
            worker.wait_for_log("batch decided", Duration::from_secs(30));
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(0..30))).await;
        worker.kill();
        let left = pending(&statuses(app, job_ids).await);
        eprintln!(
            "crash: kill {} left {left} of {} jobs pending",
            kill + 1,
            job_ids.len()
        );
        // The kill interrupted work, so the restart has something to recover. Not a timing
        // check: all kills together wait for at most `kills * most_batches` batches of 10 (600 of
        // 2,000 intents; 90 of 200 on the emulator), far from all of them.
        assert!(left > 0, "the kill came after every job was decided");
    }
}

/// Each job's decision was published once: a second decision would show as a second status.
/// Publication follows the decisions (the relay), so it waits for every job's event first.
async fn assert_each_decision_published_once(app: &TestApp, jobs: &[Value]) {
    let published = eventually(
        Duration::from_secs(60),
        "every decision to reach the consumer",
        || async {
            let events = app.published_events().await;
            let seen: HashSet<&str> = events
                .iter()
                .filter_map(|e| e["detail"]["job_id"].as_str())
                .collect();
            let all = jobs
                .iter()
                .all(|job| seen.contains(job["job_id"].as_str().unwrap()));
            all.then(|| events.clone())
        },
    )
    .await;
    let mut decisions: HashMap<String, HashSet<String>> = HashMap::new();
    // A job's events; a sale's `SaleOpened` names no job.
    for event in published
        .iter()
        .filter(|e| e["detail"]["job_id"].is_string())
    {
        let detail = &event["detail"];
        decisions
            .entry(detail["job_id"].as_str().unwrap().to_owned())
            .or_default()
            .insert(detail["status"].as_str().unwrap().to_owned());
    }
    for job in jobs {
        let id = job["job_id"].as_str().unwrap();
        let recorded = decisions.get(id).cloned().unwrap_or_default();
        let expected: HashSet<String> = [job["status"].as_str().unwrap().to_owned()].into();
        assert_eq!(recorded, expected, "job {id}'s published decisions");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_worker_mid_batch_loses_and_doubles_nothing() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 10, 20, 300).await;
    let (intents, kills, most_batches) = shape();
    let job_ids = post_intents(&app, intents).await;
    kill_repeatedly(&app, &job_ids, kills, most_batches).await;
    recover_and_check(&app, &job_ids, intents, kills).await;
}

/// The same kills around a sale's opening: the first worker is killed as soon as it has drawn
/// the order (on AWS, while it releases the pre-queue), the next ones while they decide it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_worker_during_an_opening_loses_and_doubles_nothing() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    let (intents, kills, most_batches) = shape();
    // Far enough ahead for every intent to be posted before it on this machine (a later one is
    // decided after the pre-queue: the run is the same).
    let starts = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(5);
    let created = app
        .create_event(
            &json!({"event_id": "e1", "name": "Opening", "hold_seconds": 300,
            "sale_starts_at": starts.to_string(),
            "sections": [{"section": "A", "rows": 10, "seats_per_row": 20}]}),
        )
        .await;
    assert_eq!(created.status.as_u16(), 201, "{}", created.text());
    let job_ids = post_intents(&app, intents).await;
    // The first worker dies as soon as it has drawn the order: while it releases the pre-queue
    // to SQS (AWS; the next one takes its lease over once it lapses and goes on from the count
    // released), or just after the one write that drew and queued it (embedded).
    let first = ChildProcess::start("seatclaim-worker", &worker_env(&app));
    first.wait_for_log("drawn", Duration::from_secs(60));
    first.kill();
    kill_repeatedly(&app, &job_ids, kills, most_batches).await;
    recover_and_check(&app, &job_ids, intents, kills + 1).await;
    let opened = app
        .published_events()
        .await
        .into_iter()
        .find(|e| e["detail-type"] == "SaleOpened")
        .expect("the opening was published");
    eprintln!("crash: opening {}", opened["detail"]);
}

/// Restarts the worker after the kills and checks the run: every job decided once, each seat
/// held once, every decision published once, the audit passing.
async fn recover_and_check(app: &TestApp, job_ids: &[String], intents: usize, kills: usize) {
    let worker = ChildProcess::start("seatclaim-worker", &worker_env(app));
    let jobs = eventually(
        Duration::from_secs(120),
        "every job to be decided after the last restart",
        || async {
            let jobs = statuses(app, job_ids).await;
            (pending(&jobs) == 0).then_some(jobs)
        },
    )
    .await;
    // The relay publishes what the decisions recorded; the worker stops once it has.
    eventually(Duration::from_secs(60), "the outbox to drain", || async {
        // `oldest_unpublished` only looks: `unpublished` would lease shards from the worker.
        let left = app.backend.outbox.oldest_unpublished().await.unwrap();
        left.is_none().then_some(())
    })
    .await;
    // Intents the killed workers had received but not acknowledged come back with a higher count.
    let redelivered = worker.count_logs("\"receive_count\":2");
    let exit = worker.terminate(Duration::from_secs(20));
    assert!(
        exit.success(),
        "the worker exits cleanly on SIGTERM: {exit:?}"
    );

    let tally = check_invariants(&jobs, &app.seat_map("e1").await);
    assert_eq!(tally.held + tally.rejected, intents, "{tally:?}");
    assert_each_decision_published_once(app, &jobs).await;
    app.assert_audit_passes("e1");
    eprintln!(
        "crash: {intents} intents, {kills} kills, {redelivered} log lines of redelivered intents, \
         {} held ({} seats), {} rejected, audit passed",
        tally.held, tally.held_seats, tally.rejected
    );
}
