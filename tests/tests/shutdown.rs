//! The real `seatclaim-api` binary stops gracefully on SIGTERM, and every intent it answered 202
//! for is still decided afterwards, by a worker that starts later on the same data.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use seatclaim_e2e::ChildProcess;
use serde_json::{Value, json};

fn start_api(data: &std::path::Path, embedded_worker: bool) -> (ChildProcess, String) {
    let api = ChildProcess::start(
        "seatclaim-api",
        &[
            ("SEATCLAIM_DATA_DIR", data.display().to_string()),
            ("SEATCLAIM_LISTEN", "127.0.0.1:0".into()),
            ("SEATCLAIM_EMBEDDED_WORKER", embedded_worker.to_string()),
            ("SEATCLAIM_RECEIVE_WAIT_MS", "100".into()),
            ("RUST_LOG", "info".into()),
        ],
    );
    let line = api.wait_for_log("listening", Duration::from_secs(30));
    let log: Value = serde_json::from_str(&line).expect("JSON logs");
    let address = log["address"]
        .as_str()
        .expect("the bound address is logged")
        .to_owned();
    (api, format!("http://{address}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_intent_answered_before_sigterm_is_decided_afterwards() {
    let data = tempfile::tempdir().unwrap();
    let (api, base) = start_api(data.path(), false);
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{base}/v1/events"))
        .json(&json!({"event_id": "e1", "name": "n", "sections": [{"section": "A", "rows": 5, "seats_per_row": 10}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);

    // Buyers keep posting while the API is told to stop; some are answered, the rest refused.
    let posting = tokio::spawn({
        let base = base.clone();
        async move {
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
                    }
                    Ok(response) => panic!("unexpected {} while stopping", response.status()),
                    Err(_) => break,
                }
            }
            accepted
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let exit = tokio::task::spawn_blocking(move || api.terminate(Duration::from_secs(30)))
        .await
        .unwrap();
    assert!(exit.success(), "the API exits 0 on SIGTERM: {exit:?}");
    let accepted = posting.await.unwrap();
    assert!(
        !accepted.is_empty(),
        "some intents were answered before the stop"
    );

    // A later process on the same data decides every one of them.
    let (api, base) = start_api(data.path(), true);
    let started = Instant::now();
    for job_id in &accepted {
        loop {
            let job: Value = client
                .get(format!("{base}/v1/jobs/{job_id}"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if job["status"] != "PENDING" {
                assert!(
                    job["status"] == "HELD" || job["status"] == "REJECTED",
                    "{job}"
                );
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "job {job_id} was lost"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    eprintln!(
        "shutdown: {} intents answered before SIGTERM, all decided after restart, audit passed",
        accepted.len()
    );
    let audit = std::process::Command::new(seatclaim_e2e::binary("seatclaimctl"))
        .args(["audit", "e1"])
        .env("SEATCLAIM_DATA_DIR", data.path())
        .output()
        .unwrap();
    assert!(
        audit.status.success(),
        "{}",
        String::from_utf8_lossy(&audit.stdout)
    );
    let exit = tokio::task::spawn_blocking(move || api.terminate(Duration::from_secs(30)))
        .await
        .unwrap();
    assert!(
        exit.success(),
        "the API with its in-process worker exits 0: {exit:?}"
    );
}
