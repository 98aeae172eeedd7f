//! Prices and payments over HTTP: a priced hold shows its amount due, is sold by Stripe's signed
//! webhook (once, however often it is delivered) or a payment service's confirm, never by the
//! buyer's word where a payment provider is configured; a payment that sells nothing is
//! published as `PaymentUnmatched`.

use axum::http::{Method, StatusCode};
use seatclaim_core::ports::Clock;
use seatclaim_e2e::stripe::{SECRET, checkout_completed, payment_succeeded, signature};
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, Reply, TestApp, assert_problem, eventually, hs256};
use serde_json::{Value, json};

use super::{DECIDED_WITHIN, seats};

/// An app taking Stripe payments whose event `paid` sells section A at 25.00 EUR a seat and
/// section B free; with `hs256_secret`, authentication is on.
pub(super) async fn priced_app(hs256_secret: Option<&str>) -> TestApp {
    let stripe = AppOptions {
        stripe_webhook_secret: Some(SECRET.to_owned()),
        ..AppOptions::default()
    };
    priced_app_as(stripe, hs256_secret).await
}

/// [`priced_app`] with the payment settings of `options` (a provider's secret, the mode).
pub(super) async fn priced_app_as(options: AppOptions, hs256_secret: Option<&str>) -> TestApp {
    let app = TestApp::spawn_with(AppOptions {
        auth: hs256_secret.map(hs256),
        // The race reserves round after round as one buyer.
        buyer_rate: (1000, 1000),
        ..options
    })
    .await;
    let mut create = app.request(Method::POST, "/v1/events");
    if let Some(secret) = hs256_secret {
        let admin = hs256_token(
            secret,
            &claims("admin", &json!({"scope": "seatclaim/admin"})),
        );
        create = create.header("authorization", &format!("Bearer {admin}"));
    }
    let created = create
        .json(&json!({
            // No seat limit: the races reserve round after round as one buyer.
            "event_id": "paid", "name": "Priced", "hold_seconds": 300, "currency": "EUR",
            "max_seats_per_buyer": 0,
            "sections": [
                {"section": "A", "rows": 8, "seats_per_row": 10, "price": 2500},
                {"section": "B", "rows": 1, "seats_per_row": 10},
            ],
        }))
        .send()
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    app
}

/// Holds `wanted` seats for `buyer` and returns the HELD job.
pub(super) async fn held(app: &TestApp, key: &str, wanted: &[&str]) -> Value {
    let job_id = app.reserve_ok("paid", key, &seats(wanted)).await;
    let job = app.decided(&job_id, DECIDED_WITHIN).await;
    assert_eq!(job["status"], "HELD", "{job}");
    job
}

/// The job `id` as the bearer of `token` reads it.
pub(super) async fn job_as(app: &TestApp, token: &str, id: &str) -> Value {
    app.request(Method::GET, &format!("/v1/jobs/{id}"))
        .header("authorization", &format!("Bearer {token}"))
        .send()
        .await
        .json()
}

/// Reserves `seat` of event `paid` as the bearer of `token` under `key`, and returns the job's
/// id once it is HELD.
pub(super) async fn held_as(app: &TestApp, token: &str, key: &str, seat: &str) -> String {
    let reserved = app
        .request(Method::POST, "/v1/events/paid/reservations")
        .header("authorization", &format!("Bearer {token}"))
        .header("idempotency-key", key)
        .json(&json!({"seat_ids": [seat]}))
        .send()
        .await;
    let Some(id) = reserved.json()["job_id"].as_str().map(str::to_owned) else {
        panic!("the reservation was refused: {}", reserved.text());
    };
    eventually(DECIDED_WITHIN, "the hold", || async {
        (job_as(app, token, &id).await["status"] == "HELD").then_some(())
    })
    .await;
    id
}

/// Delivers `event` to the webhook, signed now with the test secret.
pub(super) async fn deliver(app: &TestApp, event: &Value) -> Reply {
    let body = event.to_string();
    let header = signature(SECRET, app.clock.now().as_second(), body.as_bytes());
    deliver_signed(app, &header, body).await
}

/// Delivers `body` with `header` as its `Stripe-Signature`.
pub(super) async fn deliver_signed(app: &TestApp, header: &str, body: String) -> Reply {
    app.request(Method::POST, "/v1/payments/stripe")
        .header("stripe-signature", header)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
}

#[tokio::test]
async fn a_priced_hold_shows_its_amount_due_and_only_its_payment_confirms_it() {
    let app = priced_app(None).await;
    let (_, list) = app.get("/v1/events").await;
    let listed = &list["events"][0];
    assert_eq!(
        (&listed["currency"], &listed["prices"]),
        (&json!("EUR"), &json!({"A": 2500})),
        "buyers see the prices before they reserve (B is free): {list}"
    );
    let priced = held(&app, "priced", &["A-1-1", "A-1-2"]).await;
    assert_eq!(
        priced["amount_due"],
        json!({"amount": 5000, "currency": "EUR"})
    );
    let free = held(&app, "free", &["B-1-1"]).await;
    assert!(free.get("amount_due").is_none(), "{free}");

    let id = priced["job_id"].as_str().unwrap();
    let refused = app
        .post_problem(
            &format!("/v1/jobs/{id}/confirm"),
            StatusCode::PAYMENT_REQUIRED,
        )
        .await;
    assert_eq!(refused["type"], "urn:seatclaim:problem:payment-required");
    assert_eq!(
        app.job(id).await["status"],
        "HELD",
        "a refused confirm changes nothing"
    );
    let free_id = free["job_id"].as_str().unwrap();
    let (status, sold) = app.post(&format!("/v1/jobs/{free_id}/confirm")).await;
    assert_eq!(
        (status, &sold["status"]),
        (StatusCode::OK, &json!("SOLD")),
        "free seats keep the buyer's confirm"
    );

    let paid = deliver(&app, &payment_succeeded("evt_ok", id, 5000, "eur")).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert_eq!(paid.json()["outcome"], "paid");
    let job = app.job(id).await;
    assert_eq!(
        (&job["status"], &job["amount_due"]["amount"]),
        (&json!("SOLD"), &json!(5000))
    );
    let map = app.seat_map("paid").await;
    let sold_seats = map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "SOLD")
        .count();
    assert_eq!(sold_seats, 3, "both paid seats and the free one: {map}");
}

#[tokio::test]
async fn with_authentication_on_and_no_provider_a_priced_hold_still_needs_its_payment() {
    let secret = "a-development-secret-of-32-bytes!";
    let app = priced_app_as(AppOptions::default(), Some(secret)).await;
    let buyer = hs256_token(secret, &claims("b1", &json!({})));
    let id = held_as(&app, &buyer, "unpaid", "A-1-1").await;
    let refused = app
        .request(Method::POST, &format!("/v1/jobs/{id}/confirm"))
        .header("authorization", &format!("Bearer {buyer}"))
        .send()
        .await;
    let problem = assert_problem(&refused, StatusCode::PAYMENT_REQUIRED);
    assert_eq!(problem["type"], "urn:seatclaim:problem:payment-required");
    assert_eq!(job_as(&app, &buyer, &id).await["status"], "HELD");
}

#[tokio::test]
async fn payments_off_lets_the_buyer_confirm_a_priced_hold_in_development() {
    let off = AppOptions {
        payments: Some(seatclaim_api::PaymentsMode::Off),
        ..AppOptions::default()
    };
    let app = priced_app_as(off, None).await;
    let job = held(&app, "dev", &["A-1-1"]).await;
    let id = job["job_id"].as_str().unwrap();
    let (status, sold) = app.post(&format!("/v1/jobs/{id}/confirm")).await;
    assert_eq!((status, &sold["status"]), (StatusCode::OK, &json!("SOLD")));
}

#[tokio::test]
async fn prices_are_checked_when_the_event_is_created() {
    let app = TestApp::spawn().await;
    let section =
        |price: Value| json!({"section": "A", "rows": 1, "seats_per_row": 2, "price": price});
    for (body, field) in [
        (
            json!({"event_id": "p1", "name": "P", "sections": [section(json!(100))]}),
            "currency",
        ),
        (
            json!({"event_id": "p2", "name": "P", "currency": "eur", "sections": [section(json!(100))]}),
            "currency",
        ),
        (
            json!({"event_id": "p3", "name": "P", "currency": "EUR", "sections": [section(json!(1_000_000_001_u64))]}),
            "price",
        ),
    ] {
        let problem = assert_problem(
            &app.create_event(&body).await,
            StatusCode::UNPROCESSABLE_ENTITY,
        );
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{field}: {problem}"
        );
    }
    let negative = app
        .create_event(&json!({"event_id": "p4", "name": "P", "currency": "EUR", "sections": [section(json!(-1))]}))
        .await;
    assert!(negative.status.is_client_error(), "{}", negative.status);
}

#[tokio::test]
async fn the_same_stripe_event_twice_makes_one_transition() {
    let app = priced_app(None).await;
    let job = held(&app, "twice", &["A-1-3"]).await;
    let id = job["job_id"].as_str().unwrap();
    let event = checkout_completed("evt_twice", id, 2500, "EUR");
    for _ in 0..3 {
        let reply = deliver(&app, &event).await;
        assert_eq!(
            (reply.status, reply.json()["outcome"].clone()),
            (StatusCode::OK, json!("paid"))
        );
    }
    let sold = eventually(DECIDED_WITHIN, "the Sold event to be published", || async {
        let events = app.published_events().await;
        let sold: Vec<Value> = events
            .into_iter()
            .filter(|e| e["detail"]["job_id"] == id && e["detail"]["status"] == "SOLD")
            .collect();
        (!sold.is_empty()).then_some(sold)
    })
    .await;
    assert_eq!(sold.len(), 1, "one transition, one event: {sold:?}");
    assert_eq!(sold[0]["detail"]["payment_ref"], "pi_evt_twice");
}

#[tokio::test]
async fn a_missing_wrong_or_stale_signature_is_400_and_changes_nothing() {
    let app = priced_app(None).await;
    let job = held(&app, "forged", &["A-2-1"]).await;
    let id = job["job_id"].as_str().unwrap();
    let body = payment_succeeded("evt_forged", id, 2500, "eur").to_string();
    let now = app.clock.now().as_second();
    let good = signature(SECRET, now, body.as_bytes());
    let cases = [
        ("no signature", String::new()),
        (
            "another secret",
            signature("whsec_other", now, body.as_bytes()),
        ),
        (
            "a stale timestamp",
            signature(SECRET, now - 301, body.as_bytes()),
        ),
        ("another body's", signature(SECRET, now, b"{}")),
        (
            "a timestamp changed after signing",
            good.replacen(&format!("t={now}"), &format!("t={}", now - 1), 1),
        ),
        ("no v1", format!("t={now}")),
    ];
    for (what, header) in cases {
        let reply = if header.is_empty() {
            app.request(Method::POST, "/v1/payments/stripe")
                .body(body.clone())
                .send()
                .await
        } else {
            deliver_signed(&app, &header, body.clone()).await
        };
        let problem = assert_problem(&reply, StatusCode::BAD_REQUEST);
        assert_eq!(
            problem["type"], "urn:seatclaim:problem:invalid-signature",
            "{what}"
        );
    }
    assert_eq!(app.job(id).await["status"], "HELD");
}

#[tokio::test]
async fn a_payment_that_sells_nothing_is_published_as_unmatched() {
    let app = priced_app(None).await;
    let job = held(&app, "short", &["A-2-2"]).await;
    let id = job["job_id"].as_str().unwrap();
    let unknown = "0190d6c4-0000-7000-8000-000000000000";
    for (event, why) in [
        (
            payment_succeeded("evt_short", id, 2499, "eur"),
            "not the amount due",
        ),
        (
            payment_succeeded("evt_dollars", id, 2500, "usd"),
            "not the amount due",
        ),
        (
            payment_succeeded("evt_unknown", unknown, 2500, "eur"),
            "does not exist",
        ),
    ] {
        let reply = deliver(&app, &event).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let receipt = reply.json();
        assert_eq!(receipt["outcome"], "unmatched", "{receipt}");
        assert!(
            receipt["reason"].as_str().unwrap().contains(why),
            "{receipt}"
        );
    }
    assert_eq!(
        app.job(id).await["status"],
        "HELD",
        "a wrong payment changes nothing"
    );
    let ignored = deliver(
        &app,
        &json!({"id": "evt_other", "type": "charge.refunded", "data": {"object": {}}}),
    )
    .await;
    assert_eq!(ignored.json()["outcome"], "ignored");

    let found = std::sync::Mutex::new(Vec::new());
    let seen = eventually(DECIDED_WITHIN, "three PaymentUnmatched events", || async {
        let fresh = app.published_events().await;
        let mut found = found.lock().unwrap();
        found.extend(
            fresh
                .into_iter()
                .filter(|e| e["detail-type"] == "PaymentUnmatched"),
        );
        (found.len() >= 3).then(|| found.clone())
    })
    .await;
    let ids: Vec<&str> = seen
        .iter()
        .filter_map(|e| e["detail"]["stripe_event_id"].as_str())
        .collect();
    assert_eq!(ids, ["evt_short", "evt_dollars", "evt_unknown"]);
    assert_eq!(seen[0]["detail"]["job_id"], id);
    assert_eq!(seen[0]["detail"]["type"], "PaymentUnmatched");
}
