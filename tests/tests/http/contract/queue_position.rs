//! Where a PENDING buyer stands: `GET /v1/jobs/{id}` adds `queue` with the intents ahead and an
//! estimate from the rate the event's intents are being decided (`null` until one is known).

use std::time::Duration;

use axum::http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use seatclaim_core::ports::Clock;
use seatclaim_e2e::{eventually, process_batch};
use seatclaim_runtime::loops::Limits;
use serde_json::Value;

use super::{DECIDED_WITHIN, app_without_worker, seats};

#[tokio::test]
async fn a_pending_job_shows_the_line_ahead_and_when_it_may_be_decided() {
    let app = app_without_worker().await;
    let mut ids = Vec::new();
    for n in 1..=3 {
        let body = seats(&[&format!("A-1-{n}")]);
        ids.push(app.reserve_ok("e1", &format!("line-{n}"), &body).await);
    }
    for (ahead, id) in ids.iter().enumerate() {
        let queue = &app.job(id).await["queue"];
        assert_eq!(queue["ahead"], ahead, "{id}: {queue}");
        assert_eq!(
            queue["estimated_decision_at"],
            Value::Null,
            "no rate before a decision"
        );
    }

    // One intent is decided; its job leaves the line, and the others move up.
    let one = eventually(DECIDED_WITHIN, "a queued intent", || async {
        let got = app
            .backend
            .queue
            .receive(1, Duration::from_millis(200))
            .await
            .unwrap();
        (!got.is_empty()).then_some(got)
    })
    .await;
    process_batch(&app.backend, one, Limits::attempts(5)).await;
    let pending: Vec<Value> = eventually(DECIDED_WITHIN, "one decision", || async {
        let mut pending = Vec::new();
        for id in &ids {
            let job = app.job(id).await;
            if job["status"] == "PENDING" {
                pending.push(job);
            }
        }
        (pending.len() == 2).then_some(pending)
    })
    .await;
    let decided = ids
        .iter()
        .find(|id| !pending.iter().any(|j| j["job_id"] == id.as_str()));
    let (status, held) = app.get(&format!("/v1/jobs/{}", decided.unwrap())).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        held.get("queue").is_none(),
        "only a PENDING job is in line: {held}"
    );

    // A minute later the rate is one decision a minute, once the API has read the decision
    // (on DynamoDB its count is added and read within a second or two).
    app.clock.advance(SignedDuration::from_secs(60));
    let queues = eventually(DECIDED_WITHIN, "an estimate for each job", || async {
        let mut queues = Vec::new();
        for job in &pending {
            let queue = app.job(job["job_id"].as_str()?).await["queue"].clone();
            let estimate: Timestamp = queue["estimated_decision_at"].as_str()?.parse().ok()?;
            queues.push((queue["ahead"].as_i64()?, estimate));
        }
        Some(queues)
    })
    .await;
    let mut aheads = Vec::new();
    for (ahead, estimate) in queues {
        // The test's clock runs on in real time between its jumps, so the rate is about, not
        // exactly, one a minute.
        let wait = SignedDuration::from_secs(60 * (ahead + 1));
        let off = estimate.duration_since(app.clock.now() + wait).abs();
        assert!(
            off < wait / 10,
            "ahead {ahead}, estimate {estimate}: off by {off:?}"
        );
        aheads.push(ahead);
    }
    aheads.sort_unstable();
    assert_eq!(aheads, [0, 1]);
}
