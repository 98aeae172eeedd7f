//! The waitlist over HTTP: a section request that finds too few seats is WAITLISTED with its
//! `waitlist_position` (also in a `Prefer: wait` answer); the line keeps its seats from anyone
//! behind it; seats a cancel frees go to it in order, waking a long poll on a waiting job; a
//! place may be given up; an admin closes the waitlist.

use axum::http::{Method, StatusCode};
use seatclaim_e2e::{TestApp, assert_problem, eventually};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Reserves `body` in event `wl` under `key`, asking for the decision in the answer.
async fn reserve(app: &TestApp, key: &str, body: Value) -> Value {
    let reply = app
        .request(Method::POST, "/v1/events/wl/reservations")
        .header("idempotency-key", key)
        .header("prefer", "wait=10")
        .json(&body)
        .send()
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()
}

fn section(buyer: &str, quantity: u8) -> Value {
    json!({"buyer_id": buyer, "section": "W", "quantity": quantity})
}

async fn listed_waitlist(app: &TestApp) -> Value {
    let (_, list) = app.get("/v1/events").await;
    list["events"][0]["waitlist"].clone()
}

#[tokio::test]
async fn a_sections_line_is_served_in_order_and_closes() {
    let app = TestApp::spawn().await;
    let created = app
        .create_event(&json!({"event_id": "wl", "name": "Lined", "waitlist": true,
            "sections": [{"section": "W", "rows": 1, "seats_per_row": 3}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(listed_waitlist(&app).await, true);

    let first = reserve(&app, "k1", section("b1", 3)).await;
    assert_eq!(first["status"], "HELD");
    let pair = reserve(&app, "k2", section("b2", 2)).await;
    assert_eq!(
        (&pair["status"], &pair["waitlist_position"]),
        (&json!("WAITLISTED"), &json!(1))
    );
    let single = reserve(&app, "k3", section("b3", 1)).await;
    assert_eq!(single["waitlist_position"], 2);
    let around = reserve(&app, "k4", json!({"buyer_id": "b4", "seat_ids": ["W-1-1"]})).await;
    assert_eq!(
        (&around["status"], &around["reason"]),
        (&json!("REJECTED"), &json!("seat reserved for the waitlist"))
    );

    // A long poll on the waiting job returns when the line moves it.
    let pair_id = pair["job_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/jobs/{pair_id}?wait=15");
    let poll = app.get(&path);
    let cancel = async {
        eventually(DECIDED_WITHIN, "the long poll to wait", || async {
            let metrics = app.metrics().await;
            let waiting = metrics
                .lines()
                .find_map(|line| line.strip_prefix("seatclaim_long_polls_waiting "))
                .and_then(|n| n.parse::<f64>().ok());
            waiting.filter(|n| *n >= 1.0)
        })
        .await;
        let id = first["job_id"].as_str().unwrap();
        app.post(&format!("/v1/jobs/{id}/cancel")).await
    };
    let ((_, polled), (cancelled, _)) = tokio::join!(poll, cancel);
    assert_eq!(cancelled, StatusCode::OK);
    assert_eq!(polled["status"], "HELD", "{polled}");
    assert_eq!(polled["seat_ids"].as_array().unwrap().len(), 2);
    assert!(polled.get("waitlist_position").is_none());
    let single = app.job(single["job_id"].as_str().unwrap()).await;
    assert_eq!(
        single["status"], "HELD",
        "the next in line got the third seat"
    );

    // A place given up, then the waitlist closed.
    let quitter = reserve(&app, "k5", section("b5", 1)).await;
    let (status, left) = app
        .post(&format!(
            "/v1/jobs/{}/cancel",
            quitter["job_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(
        (status, &left["status"]),
        (StatusCode::OK, &json!("CANCELLED"))
    );
    let last = reserve(&app, "k6", section("b6", 1)).await;
    assert_eq!(
        last["waitlist_position"], 1,
        "the cancelled place moved it up"
    );
    let (status, closed) = app.post("/v1/events/wl/waitlist/close").await;
    assert_eq!(
        (status, closed),
        (StatusCode::OK, json!({"event_id": "wl", "rejected": 1}))
    );
    let last = app.job(last["job_id"].as_str().unwrap()).await;
    assert_eq!(
        (&last["status"], &last["reason"]),
        (&json!("REJECTED"), &json!("waitlist closed"))
    );
    assert_eq!(listed_waitlist(&app).await, false);
    app.post_problem("/v1/events/nope/waitlist/close", StatusCode::NOT_FOUND)
        .await;

    // The relay publishes in the order the job moved, a page at a time: the Held event can
    // follow the Waitlisted one in a later page, so the wait is for both.
    let published_for_pair = |events: &[Value], detail_type: &str| {
        events
            .iter()
            .any(|e| e["detail-type"] == detail_type && e["detail"]["job_id"] == pair_id.as_str())
    };
    eventually(DECIDED_WITHIN, "the Waitlisted and Held events", || async {
        let events = app.published_events().await;
        (published_for_pair(&events, "Reservation Waitlisted")
            && published_for_pair(&events, "Reservation Held"))
        .then_some(())
    })
    .await;
}

#[tokio::test]
async fn an_operator_closes_a_waitlist_with_seatclaimctl() {
    let app = TestApp::spawn().await;
    let created = app
        .create_event(&json!({"event_id": "wl", "name": "Lined", "waitlist": true,
            "sections": [{"section": "W", "rows": 1, "seats_per_row": 1}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    reserve(&app, "k1", section("b1", 1)).await;
    let waiting = reserve(&app, "k2", section("b2", 1)).await;
    assert_eq!(waiting["status"], "WAITLISTED");
    let (code, out) = app.ctl(&["events", "close-waitlist", "wl", "--json"]);
    assert_eq!(code, 0, "{out}");
    let printed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(printed, json!({"event_id": "wl", "rejected": 1}));
    let job = app.job(waiting["job_id"].as_str().unwrap()).await;
    assert_eq!(job["reason"], "waitlist closed");
    // Closed by another process: this API decides the next request on the terms as they are
    // now, not as it first read them.
    let after = reserve(&app, "k3", section("b3", 1)).await;
    assert_eq!(
        (&after["status"], &after["reason"]),
        (
            &json!("REJECTED"),
            &json!("not enough seats available in section W")
        ),
        "a closed waitlist takes nobody: {after}"
    );
    assert_eq!(app.ctl(&["events", "close-waitlist", "nope"]).0, 1);
}

#[tokio::test]
async fn a_request_its_section_can_never_serve_is_refused_and_freezes_no_line() {
    let app = TestApp::spawn().await;
    for (event, waitlist) in [("wl", true), ("plain", false)] {
        let created = app
            .create_event(
                &json!({"event_id": event, "name": "Small", "waitlist": waitlist,
                "sections": [{"section": "W", "rows": 2, "seats_per_row": 4}]}),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
        let too_long = json!({"buyer_id": "b1", "section": "W", "quantity": 6, "together": true});
        let too_many = json!({"buyer_id": "b1", "section": "W", "quantity": 9});
        for (key, body) in [("long", too_long), ("many", too_many)] {
            let refused = app.reserve(event, key, &body).await;
            let problem = assert_problem(&refused, StatusCode::UNPROCESSABLE_ENTITY);
            assert!(
                problem["detail"]
                    .as_str()
                    .unwrap()
                    .contains("can never be held"),
                "{problem}"
            );
        }
    }
    // Nobody waits in front of the next buyer: all eight seats are free for them.
    let one = reserve(&app, "k1", section("b2", 1)).await;
    assert_eq!(one["status"], "HELD", "{one}");
}

#[tokio::test]
async fn released_seats_go_to_the_earliest_waiter_they_fit() {
    let app = TestApp::spawn().await;
    let created = app
        .create_event(&json!({"event_id": "wl", "name": "Lined", "waitlist": true,
            "sections": [{"section": "W", "rows": 1, "seats_per_row": 4}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let three = reserve(&app, "k1", section("b1", 3)).await;
    let last_one = reserve(&app, "k2", section("b2", 1)).await;
    assert_eq!(
        (&three["status"], &last_one["status"]),
        (&json!("HELD"), &json!("HELD"))
    );
    let together = json!({"buyer_id": "b3", "section": "W", "quantity": 4, "together": true});
    let head = reserve(&app, "k3", together).await;
    let single = reserve(&app, "k4", section("b4", 1)).await;
    assert_eq!(
        (&head["waitlist_position"], &single["waitlist_position"]),
        (&json!(1), &json!(2))
    );
    let cancel = |job: &Value| format!("/v1/jobs/{}/cancel", job["job_id"].as_str().unwrap());
    // Three seats come back: too few for the head, one for the buyer of one behind it.
    assert_eq!(app.post(&cancel(&three)).await.0, StatusCode::OK);
    let single = app.job(single["job_id"].as_str().unwrap()).await;
    assert_eq!(single["status"], "HELD", "{single}");
    let head_now = app.job(head["job_id"].as_str().unwrap()).await;
    assert_eq!(
        (&head_now["status"], &head_now["waitlist_position"]),
        (&json!("WAITLISTED"), &json!(1)),
        "the head keeps its place"
    );
    // Once all four are back, the head gets them together.
    assert_eq!(app.post(&cancel(&last_one)).await.0, StatusCode::OK);
    assert_eq!(app.post(&cancel(&single)).await.0, StatusCode::OK);
    let head_now = app.job(head["job_id"].as_str().unwrap()).await;
    assert_eq!(head_now["status"], "HELD", "{head_now}");
    assert_eq!(head_now["seat_ids"].as_array().unwrap().len(), 4);
}
