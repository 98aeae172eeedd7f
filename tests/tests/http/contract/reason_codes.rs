//! Reasons a client can match: a REJECTED job's view and its published reservation event carry
//! the stable `reason_code` of its reason beside the text, and every problem carries the code of
//! its cause, so a client never has to match on prose.

use axum::http::{Method, StatusCode};
use seatclaim_e2e::{TestApp, assert_problem, eventually};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Reserves `body` in `event` under `key`, asking for the decision in the answer.
async fn decided(app: &TestApp, event: &str, key: &str, body: Value) -> Value {
    let reply = app
        .request(Method::POST, &format!("/v1/events/{event}/reservations"))
        .header("idempotency-key", key)
        .header("prefer", "wait=10")
        .json(&body)
        .send()
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let job = reply.json();
    // The long poll's answer is the job view, as `GET /v1/jobs/{id}` shows it.
    let id = job["job_id"].as_str().unwrap_or_default();
    assert_eq!(app.job(id).await, job, "the view of {id}");
    job
}

/// The job's `Reservation Rejected` event, once the relay has published it.
async fn rejected_event(app: &TestApp, job_id: &str) -> Value {
    eventually(DECIDED_WITHIN, "the Rejected event", || async {
        app.published_events().await.into_iter().find(|event| {
            event["detail-type"] == "Reservation Rejected" && event["detail"]["job_id"] == job_id
        })
    })
    .await
}

#[tokio::test]
async fn a_rejected_job_and_its_event_carry_the_code_of_its_reason() {
    let app = TestApp::spawn().await;
    let created = app
        .create_event(
            &json!({"event_id": "rc", "name": "Codes", "max_seats_per_buyer": 3,
            "sections": [{"section": "S", "rows": 2, "seats_per_row": 4}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    // One seat held in the middle of each row: no row has three free seats side by side.
    for (key, buyer, seat) in [("k0", "b0", "S-2-2"), ("k1", "b1", "S-1-2")] {
        let held = decided(
            &app,
            "rc",
            key,
            json!({"buyer_id": buyer, "seat_ids": [seat]}),
        )
        .await;
        assert_eq!(held["status"], "HELD", "{held}");
        assert_eq!(
            (&held["reason"], &held["reason_code"]),
            (&Value::Null, &Value::Null)
        );
    }

    let taken = json!({"buyer_id": "b2", "seat_ids": ["S-1-2"]});
    let together = json!({"buyer_id": "b3", "section": "S", "quantity": 3, "together": true});
    let over = json!({"buyer_id": "b1", "section": "S", "quantity": 3});
    let expected = [
        ("k2", taken, "seat_unavailable", "seat no longer available"),
        (
            "k3",
            together,
            "no_adjacent_seats",
            "no 3 adjacent seats in section S",
        ),
        (
            "k4",
            over,
            "buyer_limit",
            "buyer limit reached: 3 seats per buyer",
        ),
    ];
    for (key, body, code, text) in expected {
        let job = decided(&app, "rc", key, body).await;
        assert_eq!(
            (&job["status"], &job["reason_code"], &job["reason"]),
            (&json!("REJECTED"), &json!(code), &json!(text)),
            "{job}"
        );
        let event = rejected_event(&app, job["job_id"].as_str().unwrap()).await;
        assert_eq!(
            (&event["detail"]["reason_code"], &event["detail"]["reason"]),
            (&json!(code), &json!(text)),
            "{event}"
        );
    }
}

#[tokio::test]
async fn every_problem_carries_the_code_of_its_cause() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 2, 2, 300).await;
    let code = |reply: &seatclaim_e2e::Reply, status| {
        assert_problem(reply, status)["reason_code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };

    let again = app
        .create_event(&json!({"event_id": "e1", "name": "Again",
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 1}]}))
        .await;
    assert_eq!(code(&again, StatusCode::CONFLICT), "event_exists");

    let unknown = app
        .reserve(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["Z-9-9"]}),
        )
        .await;
    assert_eq!(
        code(&unknown, StatusCode::UNPROCESSABLE_ENTITY),
        "seat_unknown"
    );

    let first = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    let reused = app
        .reserve(
            "e1",
            "k2",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-2"]}),
        )
        .await;
    assert_eq!(
        code(&reused, StatusCode::UNPROCESSABLE_ENTITY),
        "idempotency_key_reused"
    );

    let loser = app
        .reserve_ok(
            "e1",
            "k3",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(app.decided(&first, DECIDED_WITHIN).await["status"], "HELD");
    assert_eq!(
        app.decided(&loser, DECIDED_WITHIN).await["status"],
        "REJECTED"
    );
    let cancel = app
        .request(Method::POST, &format!("/v1/jobs/{loser}/cancel"))
        .send()
        .await;
    assert_eq!(code(&cancel, StatusCode::CONFLICT), "wrong_status");

    let missing = app
        .request(Method::GET, "/v1/jobs/018f6e2a-0000-7000-8000-000000000001")
        .send()
        .await;
    assert_eq!(code(&missing, StatusCode::NOT_FOUND), "not_found");
}
