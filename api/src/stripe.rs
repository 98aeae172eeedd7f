//! Stripe's webhook as Stripe documents it: the `Stripe-Signature` header
//! (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one or more `v1`, checked in
//! constant time, at most [`TOLERANCE_SECONDS`] from now), and the two event types that pay for
//! a hold, read into the application's [`PaymentReport`].

mod scope;

pub use scope::{StripeEndpoint, StripeScope};

use hmac::{Hmac, Mac};
use seatclaim_core::app::payments::PaymentReport;
use seatclaim_core::domain::{Currency, JobId, Money, Payment};
use serde_json::Value;
use sha2::Sha256;

/// How far a signature's timestamp may be from now, either way: Stripe's own default.
pub const TOLERANCE_SECONDS: i64 = 300;

/// The endpoint's signing secret (`whsec_...`), kept out of every `Debug` output.
#[derive(Clone)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    /// The secret as configured; an empty value is no secret.
    #[must_use]
    pub fn new(secret: &str) -> Option<Self> {
        (!secret.is_empty()).then(|| Self(secret.to_owned()))
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

/// Why a webhook request is refused (400) before its body is believed.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// No `Stripe-Signature` header.
    #[error("the Stripe-Signature header is missing")]
    Missing,
    /// A header without a timestamp or a `v1` signature.
    #[error("the Stripe-Signature header has no timestamp or no v1 signature")]
    Malformed,
    /// The timestamp is too far from now (a replay, or a wrong clock).
    #[error("the Stripe-Signature timestamp is more than {TOLERANCE_SECONDS} s from now")]
    Stale,
    /// No `v1` signature matches.
    #[error("no Stripe-Signature v1 signature matches the payload")]
    Mismatch,
}

/// Checks `header` against the raw `body` at `now` (Unix seconds).
pub fn verify(
    secret: &WebhookSecret,
    header: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for (key, value) in header.split(',').filter_map(|part| part.split_once('=')) {
        match key.trim() {
            "t" => timestamp = Some(value.trim()),
            "v1" => signatures.push(value.trim()),
            _ => {}
        }
    }
    let text = timestamp.ok_or(SignatureError::Malformed)?;
    let at: i64 = text.parse().map_err(|_| SignatureError::Malformed)?;
    if signatures.is_empty() {
        return Err(SignatureError::Malformed);
    }
    if now.abs_diff(at) > TOLERANCE_SECONDS.unsigned_abs() {
        return Err(SignatureError::Stale);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.0.as_bytes())
        .map_err(|_| SignatureError::Mismatch)?;
    mac.update(text.as_bytes());
    mac.update(b".");
    mac.update(body);
    let matches = |signature: &&str| {
        hex::decode(signature).is_ok_and(|bytes| mac.clone().verify_slice(&bytes).is_ok())
    };
    if signatures.iter().any(matches) {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

/// What a verified event asks of seatclaim.
#[derive(Debug, PartialEq, Eq)]
pub enum Notice {
    /// A payment, to apply.
    Payment(PaymentReport),
    /// An event type seatclaim does not act on (or a checkout not yet paid).
    Ignored,
}

/// Reads a verified event; `Err` when it is not a Stripe event at all (no `id` or `type`). A
/// payment of an event outside `scope` (another mode, another account) is reported refused.
pub fn read_event(body: &[u8], scope: &StripeScope) -> Result<Notice, String> {
    let event: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let id = event["id"].as_str().ok_or("the event has no id")?;
    let kind = event["type"].as_str().ok_or("the event has no type")?;
    let object = &event["data"]["object"];
    let (amount, reference) = match kind {
        "payment_intent.succeeded" => (&object["amount_received"], object["id"].as_str()),
        "checkout.session.completed" if is_unpaid(object) => return Ok(Notice::Ignored),
        // The session's payment is its payment intent (an id, or the object when expanded):
        // the sale records it, so the intent's own `payment_intent.succeeded` is a repeat.
        "checkout.session.completed" => (
            &object["amount_total"],
            object["payment_intent"]
                .as_str()
                .or(object["payment_intent"]["id"].as_str())
                .or(object["id"].as_str()),
        ),
        _ => return Ok(Notice::Ignored),
    };
    let job = object["metadata"]["job_id"]
        .as_str()
        .or_else(|| object["client_reference_id"].as_str());
    Ok(Notice::Payment(PaymentReport {
        provider_event_id: id.to_owned(),
        job_id: job.and_then(JobId::parse),
        payment: payment(amount, &object["currency"], reference.unwrap_or(id)),
        refused: scope.refusal(&event),
    }))
}

/// A checkout completed by a payment method that settles later (`payment_status` "unpaid"):
/// Stripe reports its payment with another event, so this one pays for nothing yet.
fn is_unpaid(session: &Value) -> bool {
    session["payment_status"]
        .as_str()
        .is_some_and(|status| status != "paid" && status != "no_payment_required")
}

fn payment(amount: &Value, currency: &Value, reference: &str) -> Result<Payment, String> {
    let amount = amount.as_u64().ok_or("the payment has no amount")?;
    let currency = currency
        .as_str()
        .and_then(|code| Currency::parse_any_case(code).ok())
        .ok_or("the payment has no valid currency")?;
    Ok(Payment {
        paid: Money { amount, currency },
        reference: reference.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Computed independently: HMAC-SHA256("whsec_test", "1700000000.{\"id\":\"evt_1\"}").
    const BODY: &[u8] = br#"{"id":"evt_1"}"#;
    const SIGNED: &str = "c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925";
    const AT: i64 = 1_700_000_000;

    fn secret() -> WebhookSecret {
        WebhookSecret::new("whsec_test").unwrap()
    }

    #[test]
    fn stripes_documented_signature_is_accepted_among_others() {
        let header = format!("t={AT},v1={SIGNED}");
        assert_eq!(verify(&secret(), Some(&header), BODY, AT), Ok(()));
        let several = format!("t={AT},v0=abc,v1={},v1={SIGNED}", "00".repeat(32));
        assert_eq!(verify(&secret(), Some(&several), BODY, AT + 300), Ok(()));
    }

    #[test]
    fn a_missing_wrong_or_stale_signature_is_refused() {
        let header = format!("t={AT},v1={SIGNED}");
        let refused = |header: Option<&str>, body: &[u8], now: i64| {
            verify(&secret(), header, body, now).unwrap_err()
        };
        assert_eq!(refused(None, BODY, AT), SignatureError::Missing);
        assert_eq!(
            refused(Some(&format!("v1={SIGNED}")), BODY, AT),
            SignatureError::Malformed
        );
        assert_eq!(
            refused(Some(&format!("t={AT}")), BODY, AT),
            SignatureError::Malformed
        );
        assert_eq!(
            refused(Some(&header), BODY, AT + 301),
            SignatureError::Stale
        );
        assert_eq!(
            refused(Some(&header), BODY, AT - 301),
            SignatureError::Stale
        );
        assert_eq!(
            refused(Some(&header), br#"{"id":"evt_2"}"#, AT),
            SignatureError::Mismatch
        );
        let other = WebhookSecret::new("whsec_other").unwrap();
        assert_eq!(
            verify(&other, Some(&header), BODY, AT),
            Err(SignatureError::Mismatch)
        );
    }

    fn read(event: &Value) -> Result<Notice, String> {
        read_event(event.to_string().as_bytes(), &StripeScope::default())
    }

    #[test]
    fn both_payment_events_name_their_job_amount_and_payment() {
        let job = JobId::new();
        let intent = serde_json::json!({"id": "evt_1", "type": "payment_intent.succeeded",
            "livemode": false, "data": {"object": {"id": "pi_1", "amount_received": 4500,
                "currency": "eur", "metadata": {"job_id": job.to_string()}}}});
        let Ok(Notice::Payment(report)) = read(&intent) else {
            panic!("a payment");
        };
        assert_eq!((report.job_id, report.refused), (Some(job), None));
        let paid = report.payment.unwrap();
        assert_eq!(
            (paid.paid.amount, paid.paid.currency.as_str()),
            (4500, "EUR")
        );
        assert_eq!(paid.reference, "pi_1");
        let session = serde_json::json!({"id": "evt_2", "type": "checkout.session.completed",
            "livemode": false, "data": {"object": {"id": "cs_1", "amount_total": 10,
                "currency": "usd", "payment_intent": "pi_2",
                "client_reference_id": job.to_string()}}});
        let Ok(Notice::Payment(report)) = read(&session) else {
            panic!("a payment");
        };
        assert_eq!(report.job_id, Some(job));
        assert_eq!(report.payment.unwrap().reference, "pi_2");
        let mut expanded = session.clone();
        expanded["data"]["object"]["payment_intent"] = serde_json::json!({"id": "pi_3"});
        let Ok(Notice::Payment(report)) = read(&expanded) else {
            panic!("a payment");
        };
        assert_eq!(report.payment.unwrap().reference, "pi_3");
        let unpaid = serde_json::json!({"id": "evt_3", "type": "checkout.session.completed",
            "data": {"object": {"payment_status": "unpaid", "amount_total": 10}}});
        assert_eq!(read(&unpaid), Ok(Notice::Ignored));
        let other = serde_json::json!({"id": "evt_4", "type": "charge.refunded"});
        assert_eq!(read(&other), Ok(Notice::Ignored));
        assert!(read_event(b"[]", &StripeScope::default()).is_err());
    }

    #[test]
    fn a_payment_of_another_mode_is_read_refused() {
        let mut live = serde_json::json!({"id": "evt_5", "type": "payment_intent.succeeded",
            "livemode": true, "data": {"object": {"id": "pi_5", "amount_received": 1,
                "currency": "eur"}}});
        let Ok(Notice::Payment(report)) = read(&live) else {
            panic!("a payment");
        };
        assert!(report.refused.is_some_and(|why| why.contains("live")));
        live["livemode"] = serde_json::json!(false);
        let Ok(Notice::Payment(report)) = read(&live) else {
            panic!("a payment");
        };
        assert_eq!(report.refused, None);
    }
}
