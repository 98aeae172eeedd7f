//! Stripe's side of the webhook, for the payment tests: events shaped as Stripe sends them, and
//! the `Stripe-Signature` header Stripe computes (HMAC-SHA256 of `"<t>.<raw body>"` with the
//! endpoint's secret, hex-encoded).

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

/// The endpoint secret the payment tests configure.
pub const SECRET: &str = "whsec_seatclaim_tests";

/// The `Stripe-Signature` header of `body` signed with `secret` at `t` (Unix seconds).
#[must_use]
pub fn signature(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// A `payment_intent.succeeded` event of `amount` in `currency` for `job_id`.
#[must_use]
pub fn payment_succeeded(event_id: &str, job_id: &str, amount: u64, currency: &str) -> Value {
    json!({
        "id": event_id,
        "object": "event",
        "type": "payment_intent.succeeded",
        "livemode": false,
        "data": {"object": {
            "id": format!("pi_{event_id}"),
            "object": "payment_intent",
            "amount": amount,
            "amount_received": amount,
            "currency": currency,
            "status": "succeeded",
            "metadata": {"job_id": job_id},
        }},
    })
}

/// A `checkout.session.completed` event, paid, naming `job_id` as its client reference.
#[must_use]
pub fn checkout_completed(event_id: &str, job_id: &str, amount: u64, currency: &str) -> Value {
    json!({
        "id": event_id,
        "object": "event",
        "type": "checkout.session.completed",
        "livemode": false,
        "data": {"object": {
            "id": format!("cs_{event_id}"),
            "object": "checkout.session",
            "amount_total": amount,
            "currency": currency,
            "payment_status": "paid",
            "payment_intent": format!("pi_{event_id}"),
            "client_reference_id": job_id,
        }},
    })
}
