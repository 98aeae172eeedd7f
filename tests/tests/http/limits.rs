//! The API's request bounds on a real socket: a client that sends its headers too slowly is
//! disconnected, one that sends its body too slowly is answered 408, long polls past their cap
//! are answered at once, requests past the in-flight cap are shed with 503 and `Retry-After`
//! while the probes still answer, a request past the timeout is answered 503, and an event's
//! body is read only for an admin, and only up to 1 MiB.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::time::Duration;

use axum::http::StatusCode;
use seatclaim_api::ServerLimits;
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, TestApp, assert_problem, eventually, run_in_own_process};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn app(limits: ServerLimits) -> TestApp {
    TestApp::spawn_with(AppOptions {
        // Jobs stay PENDING: long polls wait their whole time.
        embedded_worker: false,
        limits,
        ..AppOptions::default()
    })
    .await
}

/// A PENDING job's status path.
async fn pending_job(app: &TestApp) -> String {
    app.create_grid("e1", 1, 4, 300).await;
    let job = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    format!("/v1/jobs/{job}")
}

/// Waits until the app counts `n` long polls waiting.
async fn polls_waiting(app: &TestApp, n: usize) {
    let line = format!("seatclaim_long_polls_waiting {n}");
    eventually(Duration::from_secs(30), &line, || async {
        let text = app.metrics().await;
        // Before the first poll the gauge is not there at all, which is 0 too.
        let unset = n == 0 && !text.contains("seatclaim_long_polls_waiting ");
        (unset || text.lines().any(|l| l == line)).then_some(())
    })
    .await;
}

#[test]
fn each_bound_refuses_what_passes_it_and_serves_the_rest() {
    run_in_own_process(module_path!(), "the_bounds_in_a_process_of_their_own");
}

/// The scenarios run one after another, in a process of their own: the long-poll gauge they wait
/// on is the process's.
#[tokio::test]
#[ignore = "run in a process of its own by each_bound_refuses_what_passes_it_and_serves_the_rest"]
async fn the_bounds_in_a_process_of_their_own() {
    a_client_that_sends_its_headers_too_slowly_is_disconnected().await;
    a_body_that_arrives_too_slowly_is_answered_408_and_frees_its_slot().await;
    past_the_long_poll_cap_a_poll_is_answered_at_once().await;
    past_the_in_flight_cap_requests_are_shed_with_503_and_retry_after().await;
    a_request_past_the_timeout_is_answered_503().await;
}

async fn a_client_that_sends_its_headers_too_slowly_is_disconnected() {
    let app = app(ServerLimits {
        header_read_timeout_secs: 1,
        ..ServerLimits::default()
    })
    .await;
    let mut slow = tokio::net::TcpStream::connect(app.address().unwrap())
        .await
        .unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: seatclaim\r\n")
        .await
        .unwrap();
    // The rest of the headers never comes: the server closes the connection, which the read
    // sees as its end (or a reset), instead of holding it open.
    let mut buffer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), slow.read_to_end(&mut buffer))
        .await
        .expect("the server closes a connection whose headers never end");
    assert!(read.is_err() || !String::from_utf8_lossy(&buffer).contains("200 OK"));
    let (status, _) = app.get("/healthz").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a client that sends its request is served"
    );
}

async fn past_the_long_poll_cap_a_poll_is_answered_at_once() {
    let app = app(ServerLimits {
        max_long_polls: 1,
        ..ServerLimits::default()
    })
    .await;
    let path = pending_job(&app).await;
    polls_waiting(&app, 0).await; // an earlier scenario's poll has let go
    let waiting = {
        let (app, path) = (&app, format!("{path}?wait=20"));
        async move { app.get(&path).await }
    };
    tokio::pin!(waiting);
    let at_once = async {
        polls_waiting(&app, 1).await;
        app.get(&format!("{path}?wait=20")).await
    };
    tokio::select! {
        _ = &mut waiting => panic!("the first poll ended before the second was answered"),
        (status, body) = at_once => {
            assert_eq!(status, StatusCode::OK);
            assert_eq!(body["status"], "PENDING", "answered at once, as it stands");
        }
    }
}

async fn past_the_in_flight_cap_requests_are_shed_with_503_and_retry_after() {
    let app = app(ServerLimits {
        max_in_flight: 1,
        ..ServerLimits::default()
    })
    .await;
    let path = pending_job(&app).await;
    polls_waiting(&app, 0).await; // an earlier scenario's poll has let go
    let holding = {
        let (app, path) = (&app, format!("{path}?wait=20"));
        async move { app.get(&path).await }
    };
    tokio::pin!(holding);
    let shed = async {
        polls_waiting(&app, 1).await;
        app.request(axum::http::Method::GET, "/v1/events/e1/seats")
            .send()
            .await
    };
    tokio::select! {
        _ = &mut holding => panic!("the long poll ended before the second request"),
        reply = shed => {
            assert_problem(&reply, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(reply.header("retry-after"), "1");
            // The probes are outside the cap: the load balancer still sees a healthy task.
            for probe in ["/healthz", "/readyz"] {
                let (status, _) = app.get(probe).await;
                assert_eq!(status, StatusCode::OK, "{probe} past the in-flight cap");
            }
        }
    }
}

/// Sends `head` (a request's line and headers) and `body` on a new connection, and reads the
/// answer until the server closes the connection.
async fn raw(app: &TestApp, head: &str, body: &[u8]) -> String {
    let mut stream = tokio::net::TcpStream::connect(app.address().unwrap())
        .await
        .unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    // A reset after the answer (the server closing with unread bytes) ends the read as well.
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

async fn a_body_that_arrives_too_slowly_is_answered_408_and_frees_its_slot() {
    let app = app(ServerLimits {
        body_read_timeout_secs: 1,
        max_in_flight: 1,
        ..ServerLimits::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    // The headers promise 100 bytes of body; 10 come, and then nothing.
    let head = "POST /v1/events/e1/reservations HTTP/1.1\r\nHost: seatclaim\r\n\
        Content-Type: application/json\r\nIdempotency-Key: slow\r\nContent-Length: 100\r\n\r\n";
    let answer = raw(&app, head, b"{\"buyer_id\"").await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("urn:seatclaim:problem:timeout"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    // The only in-flight slot is free again.
    let (status, _) = app.get("/v1/events/e1/seats").await;
    assert_eq!(status, StatusCode::OK, "the slot was given back");
}

async fn a_request_past_the_timeout_is_answered_503() {
    let app = app(ServerLimits {
        request_timeout_secs: 1,
        ..ServerLimits::default()
    })
    .await;
    let path = pending_job(&app).await;
    let reply = app
        .request(axum::http::Method::GET, &format!("{path}?wait=20"))
        .send()
        .await;
    let problem = assert_problem(&reply, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(problem["type"], "urn:seatclaim:problem:timeout");
}

/// Only an admin's event body is read, and at most 1 MiB of it: a buyer's token is refused with
/// 403 from the request's head alone, with none of its 32 MiB body sent.
#[tokio::test]
async fn an_event_body_is_read_only_for_an_admin_and_only_up_to_one_mebibyte() {
    const SECRET: &str = "limits-test-secret-of-at-least-32-bytes";
    let app = TestApp::spawn_with(AppOptions {
        auth: Some(seatclaim_e2e::hs256(SECRET)),
        ..AppOptions::default()
    })
    .await;
    let buyer = hs256_token(SECRET, &claims("b1", &json!({})));
    let head = format!(
        "POST /v1/events HTTP/1.1\r\nHost: seatclaim\r\nAuthorization: Bearer {buyer}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        32 * 1024 * 1024
    );
    let answer = raw(&app, &head, b"").await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");

    let admin = hs256_token(SECRET, &claims("ops", &json!({"scope": "seatclaim/admin"})));
    let seats: Vec<_> = (0..40_000)
        .map(|n| json!({"seat_id": format!("S-{n}"), "section": "S"}))
        .collect();
    let reply = app
        .request(axum::http::Method::POST, "/v1/events")
        .header("Authorization", &format!("Bearer {admin}"))
        .json(&json!({"event_id": "big", "name": "Big", "seats": seats}))
        .send()
        .await;
    assert_problem(&reply, StatusCode::PAYLOAD_TOO_LARGE);
}
