//! Long polls and who may hold them, over HTTP with authentication on: another buyer's long
//! poll is 404 at once (it learns nothing of the job and holds no slot while it would have
//! waited), and one buyer holds at most `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` waiting polls: the
//! next `?wait=` poll is 429 with `Retry-After` and a `Prefer: wait` reservation is 202 at
//! once, while admins still wait.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{
    AppOptions, Reply, TestApp, assert_problem, eventually, hs256, run_in_own_process,
};
use serde_json::json;

const SECRET: &str = "long-poll-test-secret-of-at-least-32-bytes";

/// An app with authentication on and no worker (jobs stay PENDING: long polls wait their whole
/// time), holding b1's PENDING job; returns the app and the job's path.
async fn app_with_a_pending_job() -> (TestApp, String) {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        auth: Some(hs256(SECRET)),
        ..AppOptions::default()
    })
    .await;
    let admin = token("ops", "seatclaim/admin");
    let event = json!({"event_id": "e1", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 4}]});
    let created = send(&app, Method::POST, "/v1/events", &admin, Some(event)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let reserve = json!({"seat_ids": ["A-1-1"]});
    let path = "/v1/events/e1/reservations";
    let accepted = send(&app, Method::POST, path, &token("b1", ""), Some(reserve)).await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.text());
    let job = accepted.json()["job_id"].as_str().unwrap().to_owned();
    (app, format!("/v1/jobs/{job}"))
}

/// A token for `sub` with `scope` (none when empty).
fn token(sub: &str, scope: &str) -> String {
    let extra = if scope.is_empty() {
        json!({})
    } else {
        json!({"scope": scope})
    };
    hs256_token(SECRET, &claims(sub, &extra))
}

async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> Reply {
    let mut call = app
        .request(method, path)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Idempotency-Key", "k1");
    if let Some(body) = body {
        call = call.json(&body);
    }
    call.send().await
}

#[tokio::test]
async fn another_buyers_long_poll_is_404_at_once() {
    let (app, job) = app_with_a_pending_job().await;
    let started = Instant::now();
    let reply = send(
        &app,
        Method::GET,
        &format!("{job}?wait=20"),
        &token("b2", ""),
        None,
    )
    .await;
    assert_problem(&reply, StatusCode::NOT_FOUND);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    let unknown = "/v1/jobs/00000000-0000-0000-0000-000000000000?wait=20";
    let started = Instant::now();
    let reply = send(&app, Method::GET, unknown, &token("b2", ""), None).await;
    assert_problem(&reply, StatusCode::NOT_FOUND);
    assert!(started.elapsed() < Duration::from_secs(5), "an unknown job");
}

#[test]
fn one_buyer_holds_at_most_its_share_of_the_long_polls() {
    run_in_own_process(module_path!(), "the_share_in_a_process_of_its_own");
}

/// In a process of its own: the long-poll gauge it waits on is the process's.
#[tokio::test]
#[ignore = "run in a process of its own by one_buyer_holds_at_most_its_share_of_the_long_polls"]
async fn the_share_in_a_process_of_its_own() {
    let (app, job) = app_with_a_pending_job().await;
    let polled = format!("{job}?wait=20");
    let b1 = token("b1", "");
    let waiting =
        futures_util::future::join_all((0..4).map(|_| send(&app, Method::GET, &polled, &b1, None)));
    let checks = async {
        polls_waiting(&app, 4).await;
        let fifth = send(&app, Method::GET, &polled, &b1, None).await;
        let problem = assert_problem(&fifth, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(fifth.header("retry-after"), "1");
        documented(&app, &problem).await;
        let at_once = send(&app, Method::GET, &job, &b1, None).await;
        assert_eq!(at_once.status, StatusCode::OK, "a poll without wait");
        // The same share holds for `Prefer: wait`: the intent is admitted, answered 202 at once.
        let reserve = app
            .request(Method::POST, "/v1/events/e1/reservations")
            .header("Authorization", &format!("Bearer {b1}"))
            .header("Idempotency-Key", "k2")
            .header("Prefer", "wait=10")
            .json(&json!({"seat_ids": ["A-1-2"]}));
        let started = Instant::now();
        let accepted = reserve.send().await;
        assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.text());
        assert!(started.elapsed() < Duration::from_secs(5), "it waited");
        assert!(
            accepted.headers.get("preference-applied").is_none(),
            "no wait was honoured"
        );
        // An admin is not counted in the buyer's share: its poll waits in a fifth slot.
        let admin = token("ops", "seatclaim/admin");
        tokio::select! {
            reply = send(&app, Method::GET, &polled, &admin, None) => {
                panic!("the admin's poll ended: {}", reply.status)
            }
            () = polls_waiting(&app, 5) => {}
        }
    };
    // Dropping the four waiting polls once the checks are done ends them.
    tokio::select! {
        _ = waiting => panic!("a waiting poll ended before the checks"),
        () = checks => {}
    }
}

/// Asserts that the document the app serves lists `problem`'s 429 and type for `show_job`.
async fn documented(app: &TestApp, problem: &serde_json::Value) {
    let (_, document) = app.get("/openapi.json").await;
    let answer = &document["paths"]["/v1/jobs/{job_id}"]["get"]["responses"]["429"];
    let schema = &answer["content"]["application/problem+json"]["schema"];
    let types = schema["allOf"][1]["properties"]["type"]["enum"].as_array();
    assert!(
        types.is_some_and(|types| types.contains(&problem["type"])),
        "show_job's 429 is not documented as {problem}: {answer}"
    );
    assert!(answer["headers"].get("Retry-After").is_some(), "{answer}");
}

/// Waits until the app counts `n` long polls waiting.
async fn polls_waiting(app: &TestApp, n: usize) {
    let line = format!("seatclaim_long_polls_waiting {n}");
    eventually(Duration::from_secs(30), &line, || async {
        app.metrics().await.lines().any(|l| l == line).then_some(())
    })
    .await;
}
