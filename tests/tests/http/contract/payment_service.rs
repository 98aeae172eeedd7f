//! A payment service (a token with the `seatclaim/payments` scope) confirms a priced hold with
//! what it received: the amount due sells it, once; anything else is a conflict.

use axum::http::{Method, StatusCode};
use seatclaim_e2e::assert_problem;
use seatclaim_e2e::tokens::{claims, hs256_token};
use serde_json::{Value, json};

use super::payments::{held_as, priced_app};

#[tokio::test]
async fn a_payment_service_confirms_with_the_amount_and_a_mismatch_is_409() {
    let secret = "payments-service-test-secret-of-32-bytes";
    let app = priced_app(Some(secret)).await;
    let buyer = hs256_token(secret, &claims("fan", &json!({})));
    let service = hs256_token(
        secret,
        &claims("psp", &json!({"scope": "seatclaim/payments"})),
    );
    let id = held_as(&app, &buyer, "svc", "A-1-9").await;
    let confirm = |token: &str, body: Value| {
        app.request(Method::POST, &format!("/v1/jobs/{id}/confirm"))
            .header("authorization", &format!("Bearer {token}"))
            .json(&body)
    };
    let paid = json!({"amount": 2500, "currency": "EUR", "payment_ref": "psp-1"});
    let forbidden = confirm(&buyer, paid.clone()).send().await;
    assert_problem(&forbidden, StatusCode::FORBIDDEN);
    let short = confirm(
        &service,
        json!({"amount": 2000, "currency": "EUR", "payment_ref": "psp-1"}),
    )
    .send()
    .await;
    assert_problem(&short, StatusCode::CONFLICT);
    let sold = confirm(&service, paid.clone()).send().await;
    assert_eq!(
        (sold.status, sold.json()["status"].clone()),
        (StatusCode::OK, json!("SOLD")),
        "{}",
        sold.text()
    );
    let again = confirm(&service, paid).send().await;
    assert_eq!(
        again.status,
        StatusCode::OK,
        "the same payment again is a repeat"
    );
    let other = confirm(
        &service,
        json!({"amount": 2500, "currency": "eur", "payment_ref": "psp-2"}),
    )
    .send()
    .await;
    assert_problem(&other, StatusCode::CONFLICT);
}
