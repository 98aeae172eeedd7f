//! Which Stripe events pay, over HTTP: a payment reported again after it sold its job (the
//! Checkout sold the hold, then the payment intent's own event names no job) is that job's, and
//! is never published as unmatched for a refund; an event of another mode than the deployment's,
//! or of a Connect account it does not take payments for, sells nothing and is published.

use std::sync::Mutex;

use axum::http::StatusCode;
use seatclaim_e2e::stripe::{checkout_completed, payment_succeeded};
use seatclaim_e2e::{AppOptions, TestApp, eventually};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;
use super::payments::{deliver, held, priced_app, priced_app_as};

/// A job id no job has: a payment naming it sells nothing.
const NO_JOB: &str = "0190d6c4-0000-7000-8000-000000000000";

/// The Stripe event ids of the `PaymentUnmatched` events published until the one of `control`
/// (a payment of no job, delivered last): each once, in the order first seen.
async fn unmatched_until(app: &TestApp, control: &str) -> Vec<String> {
    let reply = deliver(app, &payment_succeeded(control, NO_JOB, 2500, "eur")).await;
    assert_eq!(reply.json()["outcome"], "unmatched", "{}", reply.text());
    let seen = Mutex::new(Vec::<String>::new());
    eventually(DECIDED_WITHIN, "the control's PaymentUnmatched", || async {
        let fresh = app.published_events().await;
        let mut seen = seen.lock().expect("no check panicked holding it");
        for event in fresh
            .iter()
            .filter(|e| e["detail-type"] == "PaymentUnmatched")
        {
            let id = event["detail"]["stripe_event_id"].as_str().unwrap_or("?");
            if !seen.iter().any(|s| s == id) {
                seen.push(id.to_owned());
            }
        }
        seen.iter().any(|s| s == control).then(|| seen.clone())
    })
    .await
}

/// `event` with its payment's `field` set to `value` (`Value::Null` removes it).
fn with(mut event: Value, field: &str, value: Value) -> Value {
    let object = event["data"]["object"]
        .as_object_mut()
        .expect("a Stripe event has an object");
    match value {
        Value::Null => object.remove(field),
        value => object.insert(field.to_owned(), value),
    };
    event
}

/// The receipt of `event` as delivered to `app`: its outcome, job and reason.
async fn receipt(app: &TestApp, event: &Value) -> Value {
    let reply = deliver(app, event).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()
}

#[tokio::test]
async fn a_checkouts_payment_intent_reported_after_the_sale_is_paid_not_unmatched() {
    let app = priced_app(None).await;
    let job = held(&app, "checkout", &["A-3-1"]).await;
    let id = job["job_id"].as_str().unwrap();
    let sold = receipt(&app, &checkout_completed("evt_cs", id, 2500, "eur")).await;
    assert_eq!(
        (&sold["outcome"], &sold["job_id"]),
        (&json!("paid"), &json!(id))
    );

    // The session's payment intent (`pi_evt_cs`) succeeds: Stripe's event names no job, as a
    // Checkout's intent carries no metadata unless the session was told to copy it.
    let intent = with(
        with(
            payment_succeeded("evt_pi", id, 2500, "eur"),
            "metadata",
            Value::Null,
        ),
        "id",
        json!("pi_evt_cs"),
    );
    let again = receipt(&app, &intent).await;
    assert_eq!(
        (&again["outcome"], &again["job_id"]),
        (&json!("paid"), &json!(id)),
        "{again}"
    );
    assert_eq!(app.job(id).await["status"], "SOLD");

    let unmatched = unmatched_until(&app, "evt_control").await;
    assert_eq!(
        unmatched,
        ["evt_control"],
        "the sold seat's payment is not refunded"
    );
}

#[tokio::test]
async fn an_event_of_another_mode_pays_for_nothing_and_is_published() {
    let app = priced_app(None).await;
    let job = held(&app, "live", &["A-3-2"]).await;
    let id = job["job_id"].as_str().unwrap();
    let mut live = payment_succeeded("evt_live", id, 2500, "eur");
    live["livemode"] = json!(true);
    let refused = receipt(&app, &live).await;
    assert_eq!(refused["outcome"], "unmatched", "{refused}");
    assert!(
        refused["reason"].as_str().unwrap().contains("live-mode"),
        "{refused}"
    );
    assert_eq!(
        app.job(id).await["status"],
        "HELD",
        "a test deployment takes no live money"
    );
    assert_eq!(
        unmatched_until(&app, "evt_control").await,
        ["evt_live", "evt_control"]
    );

    let stack = priced_app_as(
        AppOptions {
            stripe_webhook_secret: Some(seatclaim_e2e::stripe::SECRET.to_owned()),
            stripe_livemode: true,
            ..AppOptions::default()
        },
        None,
    )
    .await;
    let job = held(&stack, "test-mode", &["A-3-3"]).await;
    let id = job["job_id"].as_str().unwrap();
    let test_mode = receipt(&stack, &payment_succeeded("evt_test", id, 2500, "eur")).await;
    assert_eq!(test_mode["outcome"], "unmatched", "{test_mode}");
    assert_eq!(stack.job(id).await["status"], "HELD");
    let mut live = payment_succeeded("evt_live_ok", id, 2500, "eur");
    live["livemode"] = json!(true);
    assert_eq!(receipt(&stack, &live).await["outcome"], "paid");
}

#[tokio::test]
async fn only_the_platform_and_its_configured_connect_accounts_pay() {
    let platform = priced_app(None).await;
    let job = held(&platform, "connect", &["A-3-4"]).await;
    let id = job["job_id"].as_str().unwrap();
    let mut connected = payment_succeeded("evt_acct", id, 2500, "eur");
    connected["account"] = json!("acct_1Connected");
    let refused = receipt(&platform, &connected).await;
    assert_eq!(refused["outcome"], "unmatched", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("acct_1Connected")
    );
    assert_eq!(platform.job(id).await["status"], "HELD");

    let with_accounts = priced_app_as(
        AppOptions {
            stripe_webhook_secret: Some(seatclaim_e2e::stripe::SECRET.to_owned()),
            stripe_accounts: vec!["acct_1Connected".to_owned()],
            ..AppOptions::default()
        },
        None,
    )
    .await;
    let job = held(&with_accounts, "connect", &["A-3-5"]).await;
    let id = job["job_id"].as_str().unwrap();
    let mut other = payment_succeeded("evt_other_acct", id, 2500, "eur");
    other["account"] = json!("acct_1Other");
    assert_eq!(
        receipt(&with_accounts, &other).await["outcome"],
        "unmatched"
    );
    assert_eq!(with_accounts.job(id).await["status"], "HELD");
    assert_eq!(
        unmatched_until(&with_accounts, "evt_control").await,
        ["evt_other_acct", "evt_control"]
    );
    let mut ours = payment_succeeded("evt_our_acct", id, 2500, "eur");
    ours["account"] = json!("acct_1Connected");
    assert_eq!(receipt(&with_accounts, &ours).await["outcome"], "paid");
    assert_eq!(with_accounts.job(id).await["status"], "SOLD");
}
