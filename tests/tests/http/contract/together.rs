//! Seats together over HTTP: `"together": true` holds the best block of adjacent seats in one
//! row, or is REJECTED with `no N adjacent seats in section S` (a block longer than any row is
//! 422 at admission); an explicit seat list places its
//! seats in rows and may rank them (`"best": "rank"`); bad places and preferences are 422.

use axum::http::{Method, StatusCode};
use seatclaim_e2e::{TestApp, assert_problem};
use serde_json::{Value, json};

/// Reserves `body` in `event` under `key`, asking for the decision in the answer.
async fn reserve(app: &TestApp, event: &str, key: &str, body: Value) -> (StatusCode, Value) {
    let reply = app
        .request(Method::POST, &format!("/v1/events/{event}/reservations"))
        .header("idempotency-key", key)
        .header("prefer", "wait=10")
        .json(&body)
        .send()
        .await;
    (reply.status, reply.json())
}

#[tokio::test]
async fn a_together_request_holds_the_best_block_or_is_rejected() {
    let app = TestApp::spawn().await;
    let created = app
        .create_event(&json!({"event_id": "tg", "name": "Together",
            "sections": [{"section": "S", "rows": 3, "seats_per_row": 6}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let together = |buyer: &str, quantity: u8| json!({"buyer_id": buyer, "section": "S", "quantity": quantity, "together": true});
    let (status, pair) = reserve(&app, "tg", "k1", together("b1", 2)).await;
    assert_eq!(status, StatusCode::OK, "{pair}");
    assert_eq!(
        (&pair["status"], &pair["seat_ids"]),
        (&json!("HELD"), &json!(["S-1-3", "S-1-4"]))
    );
    // Longer than any row: refused at admission, never a job.
    let (status, seven) = reserve(&app, "tg", "k2", together("b2", 7)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{seven}");
    assert!(
        seven["detail"].as_str().unwrap().contains("longest run"),
        "{seven}"
    );
    let (_, single) = reserve(
        &app,
        "tg",
        "k3",
        json!({"buyer_id": "b3", "section": "S", "quantity": 1}),
    )
    .await;
    assert_eq!(single["seat_ids"], json!(["S-1-2"]), "the best seat left");
    // Rows 2 and 3 whole, then no row with six adjacent seats left.
    for key in ["k5", "k6"] {
        let (_, six) = reserve(&app, "tg", key, together(key, 6)).await;
        assert_eq!(six["status"], "HELD", "{six}");
    }
    let (_, six) = reserve(&app, "tg", "k7", together("b7", 6)).await;
    assert_eq!(
        (&six["status"], &six["reason"]),
        (
            &json!("REJECTED"),
            &json!("no 6 adjacent seats in section S")
        )
    );
    let (status, problem) = reserve(
        &app,
        "tg",
        "k4",
        json!({"buyer_id": "b4", "seat_ids": ["S-3-1"], "together": true}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert!(problem["detail"].as_str().unwrap().starts_with("together"));
}

#[tokio::test]
async fn ranked_seats_in_named_rows_give_the_block_with_the_lowest_ranks() {
    let app = TestApp::spawn().await;
    let seat = |id: &str, position: i64, rank: i64| json!({"seat_id": id, "section": "B", "row": "AA", "position": position, "rank": rank});
    let created = app
        .create_event(&json!({"event_id": "rk", "name": "Ranked", "best": "rank",
            "seats": [seat("b1", 1, 9), seat("b2", 2, 5), seat("b3", 3, 1), seat("b4", 4, 2)]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    // 3-4 has the lowest sum (3) and strands nothing; 2-3 (6) would strand b1.
    let (_, held) = reserve(
        &app,
        "rk",
        "k1",
        json!({"buyer_id": "b1", "section": "B", "quantity": 2, "together": true}),
    )
    .await;
    assert_eq!(held["seat_ids"], json!(["b3", "b4"]), "{held}");
}

#[tokio::test]
async fn places_and_preferences_are_checked() {
    let app = TestApp::spawn().await;
    for (body, field) in [
        (
            json!({"event_id": "x1", "name": "x", "best": "cheapest",
                "sections": [{"section": "S", "rows": 1, "seats_per_row": 2}]}),
            "best",
        ),
        (
            json!({"event_id": "x2", "name": "x", "best": "rank",
                "seats": [{"seat_id": "a", "section": "S", "rank": 1}, {"seat_id": "b", "section": "S"}]}),
            "best",
        ),
        (
            json!({"event_id": "x3", "name": "x",
                "seats": [{"seat_id": "a", "section": "S", "row": "1"}]}),
            "seats",
        ),
    ] {
        let created = app.create_event(&body).await;
        let problem = assert_problem(&created, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            problem["detail"].as_str().unwrap().starts_with(field),
            "{problem}"
        );
    }
}
