//! The real `seatclaim-api` binary stops gracefully on SIGTERM while buyers are posting, and every
//! intent it answered 202 for is still decided afterwards by a `seatclaim-worker` started later on
//! the same backend. The audit passes at the end.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, eventually};
use serde_json::{Value, json};

/// Starts the API binary on the app's backend, with no in-process worker; returns it and its URL.
fn start_api(app: &TestApp) -> (ChildProcess, String) {
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_EMBEDDED_WORKER", "false".to_owned()),
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
        // The test calls the API without tokens; on AWS that must be said out loud.
        ("SEATCLAIM_AUTH", "off".to_owned()),
        ("RUST_LOG", "info".to_owned()),
    ]);
    let api = ChildProcess::start("seatclaim-api", &env);
    let url = api.listening_url(Duration::from_secs(30));
    (api, url)
}

/// Posts up to 2,000 reservations one after another until the API stops answering; counts each
/// 202 in `answered` as it comes, and returns the accepted job ids.
async fn post_until_refused(base: String, answered: Arc<AtomicUsize>) -> Vec<String> {
    let client = reqwest::Client::new();
    let mut accepted = Vec::new();
    for n in 0..2_000 {
        let sent = client
            .post(format!("{base}/v1/events/e1/reservations"))
            .header("Idempotency-Key", format!("k{n}"))
            .json(&json!({"buyer_id": format!("b{n}"), "section": "A", "quantity": 1}))
            .send()
            .await;
        match sent {
            Ok(response) if response.status() == StatusCode::ACCEPTED => {
                let body: Value = response.json().await.unwrap();
                accepted.push(body["job_id"].as_str().unwrap().to_owned());
                answered.fetch_add(1, Ordering::SeqCst);
            }
            Ok(response) => panic!("unexpected {} while stopping", response.status()),
            Err(_) => break,
        }
    }
    accepted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_intent_answered_before_sigterm_is_decided_afterwards() {
    // The in-process app only provides the storage and a view of the jobs; it decides nothing.
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 5, 10, 300).await;
    let (api, base) = start_api(&app);

    // Buyers keep posting while the API is told to stop; some are answered, the rest refused.
    let answered = Arc::new(AtomicUsize::new(0));
    let posting = tokio::spawn(post_until_refused(base, Arc::clone(&answered)));
    // SIGTERM lands mid-stream: after some answers, with most of the 2,000 still to post.
    eventually(
        Duration::from_secs(60),
        "the first 100 intents to be answered",
        || async { (answered.load(Ordering::SeqCst) >= 100).then_some(()) },
    )
    .await;
    let exit = tokio::task::spawn_blocking(move || api.terminate(Duration::from_secs(30)))
        .await
        .unwrap();
    assert!(exit.success(), "the API exits 0 on SIGTERM: {exit:?}");
    let accepted = posting.await.unwrap();
    assert!(
        accepted.len() >= 100,
        "the intents answered before the stop are all accepted: {}",
        accepted.len()
    );

    // A worker that starts later on the same backend decides every one of them.
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".to_owned()),
    ]);
    let worker = ChildProcess::start("seatclaim-worker", &env);
    for job_id in &accepted {
        let job = app.decided(job_id, Duration::from_secs(120)).await;
        assert!(
            job["status"] == "HELD" || job["status"] == "REJECTED",
            "{job}"
        );
    }
    let exit = tokio::task::spawn_blocking(move || worker.terminate(Duration::from_secs(30)))
        .await
        .unwrap();
    assert!(exit.success(), "the worker exits 0 on SIGTERM: {exit:?}");
    app.assert_audit_passes("e1");
    eprintln!(
        "shutdown: {} intents answered before SIGTERM, all decided after restart, audit passed",
        accepted.len()
    );
}
