//! The v1 HTTP contract, line by line, over a real socket or in-process through the router
//! (`SEATCLAIM_TEST_TRANSPORT=in-process`; `tests/run.sh` runs both).
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

use std::time::Duration;

use axum::http::{Method, StatusCode};
use seatclaim_core::ports::Clock;
use seatclaim_e2e::process_batch;
use seatclaim_e2e::{AppOptions, TestApp, assert_problem, eventually};
use seatclaim_runtime::loops::{BatchOutcome, Limits};
use serde_json::{Value, json};

mod channel_opening;
mod channel_release;
mod extend;
mod opening;
mod payment_attacks;
mod payment_scope;
mod payment_service;
mod payments;
mod prefer_wait;
mod presales;
mod queue_position;
mod reason_codes;
mod settle_races;
mod summary;
mod together;
mod waitlist;

const DECIDED_WITHIN: Duration = Duration::from_secs(30);

async fn app_with_event() -> TestApp {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 10, 20, 300).await;
    app
}

/// An app with event `e1` and no worker: what a request enqueues stays in the queue to be counted.
async fn app_without_worker() -> TestApp {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 10, 20, 300).await;
    app
}

/// Asserts that the queue holds `expected` intents and no more. A marker intent is posted first
/// and the count is read once it includes the marker: the marker was enqueued after everything
/// the test did before, so a count that includes it includes those too. (SQS counts are
/// approximate and may lag; the emulator's do not.)
async fn assert_queued(app: &TestApp, expected: u64, why: &str) {
    app.reserve_ok(
        "e1",
        "marker",
        &json!({"buyer_id": "marker", "seat_ids": ["A-10-20"]}),
    )
    .await;
    let queued = eventually(
        DECIDED_WITHIN,
        "the marker intent to be counted in the queue",
        || async {
            let depth = app.backend.queue.depth().await.expect("the queue depth");
            let queued = depth.ready + depth.in_flight;
            (queued > expected).then_some(queued)
        },
    )
    .await;
    assert_eq!(
        queued,
        expected + 1,
        "{why} (the count includes the marker)"
    );
}

/// Decides the queued intents as the worker would, acknowledging them.
async fn decide_queued(app: &TestApp) -> BatchOutcome {
    let deliveries = eventually(DECIDED_WITHIN, "a queued intent", || async {
        let got = app
            .backend
            .queue
            .receive(10, Duration::from_millis(200))
            .await
            .expect("a receive");
        (!got.is_empty()).then_some(got)
    })
    .await;
    process_batch(&app.backend, deliveries, Limits::attempts(5)).await
}

fn seats(ids: &[&str]) -> Value {
    json!({"buyer_id": "b1", "seat_ids": ids})
}

// ---- events ----------------------------------------------------------------------------------

#[tokio::test]
async fn creating_an_event_from_sections_makes_every_seat_available() {
    let app = TestApp::spawn().await;
    let response = app
        .create_event(
            &json!({"event_id": "e1", "name": "Night show", "hold_seconds": 300,
            "sections": [{"section": "A", "rows": 10, "seats_per_row": 20}]}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
    assert_eq!(response.json(), json!({"event_id": "e1", "seats": 200}));

    let map = app.seat_map("e1").await;
    assert_eq!(map["event_id"], "e1");
    assert!(
        map["as_of"]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .is_ok(),
        "as_of is RFC 3339"
    );
    let seats = map["seats"].as_array().unwrap();
    assert_eq!(seats.len(), 200);
    assert_eq!(
        seats[0],
        json!({"seat_id": "A-1-1", "section": "A", "state": "AVAILABLE"})
    );
    assert_eq!(seats[199]["seat_id"], "A-10-20");
    assert!(seats.iter().all(|s| s["state"] == "AVAILABLE"));
}

#[tokio::test]
async fn an_event_may_list_its_seats_one_by_one() {
    let app = TestApp::spawn().await;
    let response = app
        .create_event(&json!({"event_id": "gala", "name": "Gala",
            "seats": [{"seat_id": "box-1", "section": "boxes"}, {"seat_id": "box-2", "section": "boxes"}]}))
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
    let map = app.seat_map("gala").await;
    assert_eq!(
        map["seats"][1],
        json!({"seat_id": "box-2", "section": "boxes", "state": "AVAILABLE"})
    );
}

#[tokio::test]
async fn holds_last_three_hundred_seconds_unless_the_event_says_otherwise() {
    let app = TestApp::spawn().await;
    app.create_event(
        &json!({"event_id": "e1", "name": "n", "seats": [{"seat_id": "s1", "section": "A"}]}),
    )
    .await;
    let job_id = app
        .reserve_ok("e1", "k", &json!({"buyer_id": "b1", "seat_ids": ["s1"]}))
        .await;
    let job = app.decided(&job_id, DECIDED_WITHIN).await;
    let until: jiff::Timestamp = job["hold_expires_at"].as_str().unwrap().parse().unwrap();
    let left = until.duration_since(app.clock.now()).as_secs();
    assert!((290..=300).contains(&left), "hold has {left}s left");
}

#[tokio::test]
async fn creating_the_same_event_twice_is_a_conflict() {
    let app = app_with_event().await;
    let again = app
        .create_event(&json!({"event_id": "e1", "name": "n", "sections": [{"section": "B", "rows": 1, "seats_per_row": 1}]}))
        .await;
    assert_problem(&again, StatusCode::CONFLICT);
}

#[tokio::test]
async fn an_event_needs_one_to_two_hundred_thousand_unique_seats() {
    let app = TestApp::spawn().await;
    let cases = [
        json!({"event_id": "e", "name": "n", "sections": []}),
        json!({"event_id": "e", "name": "n", "seats": []}),
        json!({"event_id": "e", "name": "n", "sections": [{"section": "A", "rows": 1000, "seats_per_row": 201}]}),
        json!({"event_id": "e", "name": "n", "seats": [{"seat_id": "x", "section": "A"}, {"seat_id": "x", "section": "A"}]}),
        json!({"event_id": "e", "name": "n"}),
        json!({"event_id": "e", "name": "n", "hold_seconds": 0, "seats": [{"seat_id": "x", "section": "A"}]}),
        json!({"event_id": "e", "name": "n", "hold_seconds": 86_401, "seats": [{"seat_id": "x", "section": "A"}]}),
        json!({"event_id": "bad/id", "name": "n", "seats": [{"seat_id": "x", "section": "A"}]}),
    ];
    for body in cases {
        let problem = assert_problem(
            &app.create_event(&body).await,
            StatusCode::UNPROCESSABLE_ENTITY,
        );
        assert!(
            !problem["detail"].as_str().unwrap().is_empty(),
            "{body}: {problem}"
        );
    }
    assert_eq!(
        app.get("/v1/events/e/seats").await.0,
        StatusCode::NOT_FOUND,
        "nothing was created"
    );
}

/// `SEATCLAIM_MAX_EVENT_SEATS` lowers the most seats an event created through the API may have.
#[tokio::test]
async fn an_event_past_the_apis_seat_cap_is_refused() {
    let app = TestApp::spawn_with(AppOptions {
        max_event_seats: 10,
        ..AppOptions::default()
    })
    .await;
    let grid = |seats_per_row: u32| {
        json!({"event_id": format!("e{seats_per_row}"), "name": "n",
               "sections": [{"section": "A", "rows": 1, "seats_per_row": seats_per_row}]})
    };
    let problem = assert_problem(
        &app.create_event(&grid(11)).await,
        StatusCode::UNPROCESSABLE_ENTITY,
    );
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("SEATCLAIM_MAX_EVENT_SEATS"),
        "{problem}"
    );
    assert_eq!(
        app.create_event(&grid(10)).await.status,
        StatusCode::CREATED
    );
}

/// Every answer, the page's and the API's, errors and probes included, tells the browser not to
/// sniff types, not to send a referrer, to run the page's own scripts only and never in a frame.
#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let app = TestApp::spawn().await;
    for path in [
        "/",
        "/ui/app.js",
        "/healthz",
        "/v1/events",
        "/v1/events/nope/seats",
    ] {
        let reply = app.request(Method::GET, path).send().await;
        assert_eq!(reply.header("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(reply.header("referrer-policy"), "no-referrer", "{path}");
        let policy = reply.header("content-security-policy");
        assert!(
            policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
    }
}

#[tokio::test]
async fn an_event_body_that_is_not_json_or_has_unknown_fields_is_refused() {
    let app = TestApp::spawn().await;
    let broken = app
        .request(Method::POST, "/v1/events")
        .header("content-type", "application/json")
        .body("{\"event_id\": ")
        .send()
        .await;
    assert_problem(&broken, StatusCode::BAD_REQUEST);
    let unknown = app
        .create_event(&json!({"event_id": "e", "name": "n", "venue": "x", "seats": [{"seat_id": "x", "section": "A"}]}))
        .await;
    let problem = assert_problem(&unknown, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        problem["detail"].as_str().unwrap().contains("venue"),
        "{problem}"
    );
}

#[tokio::test]
async fn the_seat_map_of_an_unknown_event_is_not_found() {
    let app = TestApp::spawn().await;
    let response = app
        .request(Method::GET, "/v1/events/nope/seats")
        .send()
        .await;
    assert_problem(&response, StatusCode::NOT_FOUND);
}

// ---- reservations ----------------------------------------------------------------------------

#[tokio::test]
async fn a_reservation_is_accepted_at_once_with_a_job_to_poll() {
    let app = app_with_event().await;
    let response = app
        .reserve("e1", "key-1", &seats(&["A-1-1", "A-1-2"]))
        .await;
    assert_eq!(response.status, StatusCode::ACCEPTED);
    assert_eq!(response.header("retry-after"), "1");
    let location = response.header("location").to_owned();
    let body = response.json();
    let job_id = body["job_id"].as_str().unwrap();
    assert!(
        seatclaim_core::domain::JobId::parse(job_id).is_some(),
        "job_id is a UUID"
    );
    assert_eq!(body["status"], "PENDING");
    assert_eq!(body["status_url"], format!("/v1/jobs/{job_id}"));
    assert_eq!(location, format!("/v1/jobs/{job_id}"));

    let job = app.decided(job_id, DECIDED_WITHIN).await;
    assert_eq!(job["status"], "HELD");
    assert_eq!(job["seat_ids"], json!(["A-1-1", "A-1-2"]));
    assert_eq!(job["event_id"], "e1");
    assert_eq!(job["buyer_id"], "b1");
    assert_eq!(job["reason"], Value::Null);
    assert!(
        job["hold_expires_at"]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .is_ok()
    );
}

#[tokio::test]
async fn a_section_reservation_holds_any_free_seats_of_that_section() {
    let app = app_with_event().await;
    let job_id = app
        .reserve_ok(
            "e1",
            "k",
            &json!({"buyer_id": "b1", "section": "A", "quantity": 3}),
        )
        .await;
    let job = app.decided(&job_id, DECIDED_WITHIN).await;
    assert_eq!(job["status"], "HELD");
    assert_eq!(job["seat_ids"].as_array().unwrap().len(), 3);
    let map = app.seat_map("e1").await;
    let held = map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "HELD")
        .count();
    assert_eq!(held, 3);
}

#[tokio::test]
async fn retrying_with_the_same_key_and_body_returns_the_same_job_and_enqueues_nothing() {
    let app = app_without_worker().await;
    let first = app.reserve_ok("e1", "retry-me", &seats(&["A-1-1"])).await;
    // Decided first: a retry of a job still PENDING may send its intent again (on SQS, in case
    // the first send was lost), a retry of a decided one must not.
    assert_eq!(
        decide_queued(&app).await,
        BatchOutcome {
            held: 1,
            ..BatchOutcome::default()
        }
    );
    let second = app.reserve_ok("e1", "retry-me", &seats(&["A-1-1"])).await;
    assert_eq!(first, second);
    assert_queued(&app, 0, "the retry enqueued an intent").await;
    assert_eq!(app.job(&first).await["status"], "HELD");
}

#[tokio::test]
async fn reusing_a_key_for_a_different_request_is_unprocessable() {
    let app = app_without_worker().await;
    app.reserve_ok("e1", "k", &seats(&["A-1-1"])).await;
    let reused = app.reserve("e1", "k", &seats(&["A-1-2"])).await;
    let problem = assert_problem(&reused, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("Idempotency-Key")
    );
    assert_queued(&app, 1, "the refused request enqueued an intent").await;
}

#[tokio::test]
async fn idempotency_keys_are_scoped_to_the_buyer() {
    let app = app_with_event().await;
    let mine = app
        .reserve_ok(
            "e1",
            "shared-key",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    let theirs = app
        .reserve_ok(
            "e1",
            "shared-key",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_ne!(mine, theirs);
}

#[tokio::test]
async fn a_missing_or_malformed_idempotency_key_is_a_bad_request() {
    let app = app_without_worker().await;
    let missing = app
        .request(Method::POST, "/v1/events/e1/reservations")
        .json(&seats(&["A-1-1"]))
        .send()
        .await;
    assert_problem(&missing, StatusCode::BAD_REQUEST);
    for key in ["", &"k".repeat(256), "tab\tkey"] {
        let response = app.reserve("e1", key, &seats(&["A-1-1"])).await;
        assert_problem(&response, StatusCode::BAD_REQUEST);
    }
    let longest = app
        .reserve("e1", &"k".repeat(255), &seats(&["A-1-1"]))
        .await;
    assert_eq!(longest.status, StatusCode::ACCEPTED);
    assert_queued(&app, 1, "a refused request enqueued an intent").await;
}

#[tokio::test]
async fn malformed_reservation_bodies_are_refused_with_a_detail_naming_the_problem() {
    let app = app_without_worker().await;
    let eleven: Vec<String> = (1..=11).map(|n| format!("A-1-{n}")).collect();
    let cases = [
        (json!({"buyer_id": "b1", "seat_ids": [], }), "seat_ids"),
        (json!({"buyer_id": "b1", "seat_ids": eleven}), "seat_ids"),
        (
            json!({"buyer_id": "b1", "seat_ids": ["A-1-1", "A-1-1"]}),
            "more than once",
        ),
        (
            json!({"buyer_id": "b1", "section": "A", "quantity": 0}),
            "quantity",
        ),
        (
            json!({"buyer_id": "b1", "section": "A", "quantity": 11}),
            "quantity",
        ),
        (json!({"buyer_id": "b1", "section": "A"}), "quantity"),
        (
            json!({"buyer_id": "b1", "seat_ids": ["A-1-1"], "section": "A", "quantity": 1}),
            "not both",
        ),
        (
            json!({"buyer_id": "b1", "seat_ids": ["A-1-1", "Z-9-9"]}),
            "Z-9-9",
        ),
        (
            json!({"buyer_id": "b1", "section": "Z", "quantity": 1}),
            "Z",
        ),
        (
            json!({"buyer_id": "b1", "seat_ids": ["A-1-1"], "seats": 2}),
            "seats",
        ),
        (json!({"seat_ids": ["A-1-1"]}), "buyer_id"),
        (json!({"buyer_id": "", "seat_ids": ["A-1-1"]}), "buyer_id"),
    ];
    for (index, (body, named)) in cases.into_iter().enumerate() {
        let response = app.reserve("e1", &format!("bad-{index}"), &body).await;
        let problem = assert_problem(&response, StatusCode::UNPROCESSABLE_ENTITY);
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains(named),
            "{body}: detail {detail:?} does not name {named:?}"
        );
    }
    let not_json = app
        .request(Method::POST, "/v1/events/e1/reservations")
        .header("Idempotency-Key", "k")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await;
    assert_problem(&not_json, StatusCode::BAD_REQUEST);
    let not_declared_json = app
        .request(Method::POST, "/v1/events/e1/reservations")
        .header("Idempotency-Key", "k")
        .body(seats(&["A-1-1"]).to_string())
        .send()
        .await;
    assert_problem(&not_declared_json, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_queued(&app, 0, "a refused request enqueued an intent").await;
}

#[tokio::test]
async fn reserving_in_an_unknown_event_is_not_found() {
    let app = app_without_worker().await;
    assert_problem(
        &app.reserve("nope", "k", &seats(&["A-1-1"])).await,
        StatusCode::NOT_FOUND,
    );
    assert_problem(
        &app.reserve("bad%2Fid", "k", &seats(&["A-1-1"])).await,
        StatusCode::NOT_FOUND,
    );
    assert_queued(&app, 0, "a refused request enqueued an intent").await;
}

#[tokio::test]
async fn a_reservation_body_over_sixty_four_kibibytes_is_too_large() {
    let app = app_without_worker().await;
    let body = json!({"buyer_id": "x".repeat(65 * 1024), "seat_ids": ["A-1-1"]});
    assert_problem(
        &app.reserve("e1", "k", &body).await,
        StatusCode::PAYLOAD_TOO_LARGE,
    );
    assert_queued(&app, 0, "a refused request enqueued an intent").await;
}

// ---- jobs ------------------------------------------------------------------------------------

#[tokio::test]
async fn a_second_claim_on_a_held_seat_is_rejected_for_good() {
    let app = app_with_event().await;
    let first = app.reserve_ok("e1", "k1", &seats(&["A-1-1"])).await;
    assert_eq!(app.decided(&first, DECIDED_WITHIN).await["status"], "HELD");
    let second = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-2", "A-1-1"]}),
        )
        .await;
    let job = app.decided(&second, DECIDED_WITHIN).await;
    assert_eq!(job["status"], "REJECTED");
    assert_eq!(job["reason"], "seat no longer available");
    assert_eq!(job["seat_ids"], json!([]));
    assert_eq!(job["hold_expires_at"], Value::Null);
    let map = app.seat_map("e1").await;
    assert_eq!(
        map["seats"][1]["state"], "AVAILABLE",
        "all or none: A-1-2 was not held"
    );
}

#[tokio::test]
async fn an_unknown_or_malformed_job_id_is_not_found() {
    let app = TestApp::spawn().await;
    for id in ["7f1c0d52-8a6e-4c09-9f8e-3f4b5f0e2a11", "not-a-uuid"] {
        for response in [
            app.request(Method::GET, &format!("/v1/jobs/{id}"))
                .send()
                .await,
            app.request(Method::POST, &format!("/v1/jobs/{id}/confirm"))
                .send()
                .await,
            app.request(Method::POST, &format!("/v1/jobs/{id}/cancel"))
                .send()
                .await,
        ] {
            assert_problem(&response, StatusCode::NOT_FOUND);
        }
    }
}

#[tokio::test]
async fn confirming_a_hold_sells_it_and_repeating_the_confirm_is_harmless() {
    let app = app_with_event().await;
    let job_id = app.reserve_ok("e1", "k", &seats(&["A-1-1"])).await;
    app.decided(&job_id, DECIDED_WITHIN).await;
    for _ in 0..2 {
        let (status, job) = app.post(&format!("/v1/jobs/{job_id}/confirm")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(job["status"], "SOLD");
        assert_eq!(job["seat_ids"], json!(["A-1-1"]));
    }
    assert_eq!(app.seat_map("e1").await["seats"][0]["state"], "SOLD");
    app.post_problem(&format!("/v1/jobs/{job_id}/cancel"), StatusCode::CONFLICT)
        .await;
}

#[tokio::test]
async fn cancelling_a_hold_returns_its_seats_and_repeating_the_cancel_is_harmless() {
    let app = app_with_event().await;
    let job_id = app.reserve_ok("e1", "k", &seats(&["A-1-1", "A-1-2"])).await;
    app.decided(&job_id, DECIDED_WITHIN).await;
    for _ in 0..2 {
        let (status, job) = app.post(&format!("/v1/jobs/{job_id}/cancel")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(job["status"], "CANCELLED");
    }
    let map = app.seat_map("e1").await;
    assert!(
        map["seats"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] == "AVAILABLE")
    );
    app.post_problem(&format!("/v1/jobs/{job_id}/confirm"), StatusCode::CONFLICT)
        .await;
    let again = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-2"]}),
        )
        .await;
    assert_eq!(app.decided(&again, DECIDED_WITHIN).await["status"], "HELD");
}

#[tokio::test]
async fn a_rejected_job_cannot_be_confirmed_or_cancelled() {
    let app = app_with_event().await;
    let first = app.reserve_ok("e1", "k1", &seats(&["A-1-1"])).await;
    app.decided(&first, DECIDED_WITHIN).await;
    let loser = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(
        app.decided(&loser, DECIDED_WITHIN).await["status"],
        "REJECTED"
    );
    for action in ["confirm", "cancel"] {
        app.post_problem(&format!("/v1/jobs/{loser}/{action}"), StatusCode::CONFLICT)
            .await;
    }
}

#[tokio::test]
async fn a_pending_job_cannot_be_confirmed_or_cancelled() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 5, 300).await;
    let job_id = app.reserve_ok("e1", "k", &seats(&["A-1-1"])).await;
    assert_eq!(app.job(&job_id).await["status"], "PENDING");
    for action in ["confirm", "cancel"] {
        app.post_problem(&format!("/v1/jobs/{job_id}/{action}"), StatusCode::CONFLICT)
            .await;
    }
}

// ---- health and the rest ---------------------------------------------------------------------

#[tokio::test]
async fn health_and_readiness_answer_ok() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.get("/healthz").await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
    assert_eq!(
        app.get("/readyz").await,
        (StatusCode::OK, json!({"status": "ready"}))
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_get_problems_too() {
    let app = TestApp::spawn().await;
    let missing = app.request(Method::GET, "/v2/anything").send().await;
    assert_problem(&missing, StatusCode::NOT_FOUND);
    let wrong_method = app.request(Method::DELETE, "/v1/events").send().await;
    assert_problem(&wrong_method, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn every_decision_is_published_as_a_reservation_event() {
    let app = app_with_event().await;
    let job_id = app.reserve_ok("e1", "k", &seats(&["A-1-1"])).await;
    app.decided(&job_id, DECIDED_WITHIN).await;
    app.post(&format!("/v1/jobs/{job_id}/confirm")).await;
    let kinds = eventually(DECIDED_WITHIN, "two events of the job", || async {
        let kinds: Vec<String> = app
            .published_events()
            .await
            .iter()
            .filter(|e| e["detail"]["job_id"] == job_id.as_str())
            .map(|e| e["detail-type"].as_str().unwrap().to_owned())
            .collect();
        (kinds.len() >= 2).then_some(kinds)
    })
    .await;
    assert_eq!(kinds, ["Reservation Held", "Reservation Sold"]);
    let event = &app.published_events().await[0];
    assert_eq!(event["source"], "seatclaim.reservations");
    assert_eq!(event["detail"]["seat_ids"], json!(["A-1-1"]));
}

#[tokio::test]
async fn a_status_request_may_wait_for_the_decision() {
    let app = app_with_event().await;
    let job_id = app.reserve_ok("e1", "k", &seats(&["A-1-1"])).await;
    let (status, job) = app.get(&format!("/v1/jobs/{job_id}?wait=10")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        job["status"], "HELD",
        "one request, answered once decided: {job}"
    );
    let malformed = app
        .request(Method::GET, &format!("/v1/jobs/{job_id}?wait=soon"))
        .send()
        .await;
    assert_problem(&malformed, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_waiting_status_request_answers_pending_when_nothing_decides_in_time() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 2, 300).await;
    let job_id = app.reserve_ok("e1", "k", &seats(&["A-1-1"])).await;
    let (status, job) = app.get(&format!("/v1/jobs/{job_id}?wait=1")).await;
    assert_eq!(
        (status, job["status"].as_str()),
        (StatusCode::OK, Some("PENDING"))
    );
}
