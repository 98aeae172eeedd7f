//! The payment answers: a priced hold's 402, the payment service's 409, and the Stripe webhook's
//! 200, 400 and 404, each as the document says.

use axum::http::{Method, StatusCode};
use seatclaim_core::ports::Clock;
use seatclaim_e2e::stripe::{SECRET, payment_succeeded, signature};
use seatclaim_e2e::{AppOptions, TestApp};
use serde_json::json;

use super::Expect;

const CONFIRM: &str = "/v1/jobs/{job_id}/confirm";
const WEBHOOK: &str = "/v1/payments/stripe";

/// An app taking Stripe payments, with event `paid` whose seats cost 10.00 EUR.
pub async fn priced_app() -> TestApp {
    let app = TestApp::spawn_with(AppOptions {
        stripe_webhook_secret: Some(SECRET.to_owned()),
        ..AppOptions::default()
    })
    .await;
    let event = json!({"event_id": "paid", "name": "Priced", "currency": "EUR",
        "sections": [{"section": "A", "rows": 1, "seats_per_row": 4, "price": 1000}]});
    assert_eq!(app.create_event(&event).await.status, StatusCode::CREATED);
    app
}

pub async fn answers(x: &Expect<'_>) {
    let job = x
        .app
        .reserve_ok(
            "paid",
            "k-paid",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    x.app
        .decided(&job, std::time::Duration::from_secs(30))
        .await;
    let confirm = format!("/v1/jobs/{job}/confirm");
    x.to(Method::POST, CONFIRM, &confirm)
        .answers(StatusCode::PAYMENT_REQUIRED)
        .await;
    x.to(Method::POST, CONFIRM, &confirm)
        .json(&json!({"amount": 1, "currency": "EUR", "payment_ref": "p"}))
        .answers(StatusCode::CONFLICT)
        .await;
    x.to(Method::POST, CONFIRM, &confirm)
        .json(&json!({"amount": 1, "currency": "E", "payment_ref": "p"}))
        .answers(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
    let body = payment_succeeded("evt_doc", &job, 1000, "eur").to_string();
    x.to(Method::POST, WEBHOOK, WEBHOOK)
        .header("Stripe-Signature", "t=1,v1=00")
        .body(body.clone())
        .answers(StatusCode::BAD_REQUEST)
        .await;
    let now = x.app.clock.now().as_second();
    x.to(Method::POST, WEBHOOK, WEBHOOK)
        .header("Stripe-Signature", &signature(SECRET, now, body.as_bytes()))
        .body(body)
        .answers(StatusCode::OK)
        .await;
}

/// Without a Stripe secret the webhook is not there.
pub async fn unconfigured(x: &Expect<'_>) {
    x.to(Method::POST, WEBHOOK, WEBHOOK)
        .header("Stripe-Signature", "t=1,v1=00")
        .body("{}")
        .answers(StatusCode::NOT_FOUND)
        .await;
}
