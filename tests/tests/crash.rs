//! The worker process is SIGKILLed at random moments, several times, and restarted each time:
//! nothing accepted is lost, nothing is decided twice, every seat has at most one holder, and the
//! audit passes at the end.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, check_invariants, test_backend};
use seatclaim_shared::config::BackendKind;
use serde_json::{Value, json};

/// Intents in the run (over 200 seats), kills, and the most batches a worker decides before it is
/// killed (a random number from 1 to that). The emulator is slow, so its run is smaller.
fn shape() -> (usize, usize, u32) {
    match test_backend() {
        BackendKind::Embedded => (2_000, 5, 12),
        BackendKind::Aws => (200, 3, 3),
    }
}

fn worker_env(app: &TestApp) -> Vec<(&'static str, String)> {
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_VISIBILITY_TIMEOUT_SECS", "1".into()),
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".into()),
        ("SEATCLAIM_RELAY_INTERVAL_MS", "50".into()),
        ("SEATCLAIM_SWEEP_INTERVAL_MS", "100".into()),
        ("RUST_LOG", "info".into()),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_worker_mid_batch_loses_and_doubles_nothing() {
    let app = Arc::new(
        TestApp::spawn_with(AppOptions {
            embedded_worker: false,
            ..AppOptions::default()
        })
        .await,
    );
    app.create_grid("e1", 10, 20, 300).await;
    let (intents, kills, most_batches) = shape();
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

    for kill in 0..kills {
        let worker = ChildProcess::start("seatclaim-worker", &worker_env(&app));
        // Let it decide a random number of batches, then kill it a random moment later.
        for _ in 0..=(random_below(most_batches)) {
            worker.wait_for_log("batch decided", Duration::from_secs(30));
        }
        std::thread::sleep(Duration::from_millis(u64::from(random_below(30))));
        worker.kill();
        let left = pending(&statuses(&app, &job_ids).await);
        eprintln!(
            "crash: kill {} left {left} of {intents} jobs pending",
            kill + 1
        );
        assert!(left > 0, "the kill came too late to interrupt anything");
    }

    let worker = ChildProcess::start("seatclaim-worker", &worker_env(&app));
    let started = Instant::now();
    let jobs = loop {
        let jobs = statuses(&app, &job_ids).await;
        if pending(&jobs) == 0 {
            break jobs;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{} jobs never decided",
            pending(&jobs)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Intents the killed workers had received but not acknowledged come back with a higher count.
    let redelivered = worker.count_logs("\"receive_count\":2");
    let exit = worker.terminate(Duration::from_secs(20));
    assert!(
        exit.success(),
        "the worker exits cleanly on SIGTERM: {exit:?}"
    );

    let tally = check_invariants(&jobs, &app.seat_map("e1").await);
    assert_eq!(tally.held + tally.rejected, intents, "{tally:?}");

    // Each job's decision was recorded once: a second decision would show as a second status.
    let mut decisions: HashMap<String, HashSet<String>> = HashMap::new();
    for event in app.published_events().await {
        let detail = &event["detail"];
        decisions
            .entry(detail["job_id"].as_str().unwrap().to_owned())
            .or_default()
            .insert(detail["status"].as_str().unwrap().to_owned());
    }
    for job in &jobs {
        let id = job["job_id"].as_str().unwrap();
        let recorded = decisions.get(id).cloned().unwrap_or_default();
        let expected: HashSet<String> = [job["status"].as_str().unwrap().to_owned()].into();
        assert_eq!(recorded, expected, "job {id}'s published decisions");
    }
    app.assert_audit_passes("e1");
    eprintln!(
        "crash: {intents} intents, {kills} kills, {redelivered} log lines of redelivered intents, \
         {} held ({} seats), {} rejected, audit passed",
        tally.held, tally.held_seats, tally.rejected
    );
}

/// A number below `bound`, different in each run, so kills land at different points.
fn random_below(bound: u32) -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    nanos % bound.max(1)
}
