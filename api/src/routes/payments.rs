//! `POST /v1/payments/stripe`: Stripe's webhook. Nothing in the body is believed before its
//! signature is checked; a payment that sells nothing is answered 200 (Stripe would only retry
//! it) and published as `PaymentUnmatched` for the refund workflow.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use seatclaim_core::app::payments::{PaymentOutcome, record_payment};
use seatclaim_core::domain::{JobId, ReasonCode};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::ApiBody;
use crate::state::AppState;
use crate::stripe::{Notice, read_event, verify};

/// What a webhook event came to.
#[derive(Serialize, ToSchema)]
pub struct PaymentReceipt {
    /// `paid` (the job is SOLD by this payment), `unmatched` (it sold nothing; published as
    /// `PaymentUnmatched` for a refund) or `ignored` (an event type seatclaim does not act on).
    outcome: &'static str,
    /// The job the payment named, if it named one.
    #[schema(value_type = Option<String>, format = "uuid")]
    job_id: Option<JobId>,
    /// Why an unmatched payment sold nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The stable code of `reason` (`payment_mismatch`, `hold_lapsed`, `payment_refused`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason_code: Option<ReasonCode>,
}

/// `POST /v1/payments/stripe`: a Stripe event, signed with the endpoint's secret
/// (`SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET`). `payment_intent.succeeded` and
/// `checkout.session.completed` sell the HELD job their metadata names when they pay exactly its
/// amount due before its hold lapses; the same event again changes nothing, and neither does
/// another report of a payment that already sold a job (by its payment intent). An event of
/// another mode than `SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE`, or of a Connect account not in
/// `SEATCLAIM_PAYMENTS_STRIPE_ACCOUNTS`, pays for nothing (`unmatched`).
#[utoipa::path(
    post,
    path = "/v1/payments/stripe",
    tag = "payments",
    operation_id = "stripe_webhook",
    params(("Stripe-Signature" = String, Header, description = "`t=<unix seconds>,v1=<hex \
        HMAC-SHA256 of \"<t>.<raw body>\">`, as Stripe signs its webhooks.")),
    request_body(content = Object, description = "A Stripe event object.",
        content_type = "application/json"),
    responses(
        (status = 200, description = "Received: the payment sold the job, sold nothing (and \
            was published for a refund), or was ignored.", body = PaymentReceipt),
        (status = 400, description = "A missing, wrong or stale signature, or a signed body \
            that is not a Stripe event; nothing changed."),
        (status = 404, description = "No Stripe webhook secret is configured."),
        (status = 413, description = "A body over 256 KiB."),
        (status = 503, description = "The backend is unavailable; Stripe retries."),
    ),
)]
pub async fn stripe(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Result<Json<PaymentReceipt>, ApiError> {
    let endpoint = state.access.stripe.as_ref().ok_or_else(|| {
        ApiError::NotFound("payments by Stripe are not configured on this API".into())
    })?;
    let header = headers
        .get("stripe-signature")
        .and_then(|value| value.to_str().ok());
    let now = state.backend.clock.now().as_second();
    verify(&endpoint.secret, header, &body, now)?;
    let report = match read_event(&body, &endpoint.scope).map_err(ApiError::BadRequest)? {
        Notice::Payment(report) => report,
        Notice::Ignored => {
            return Ok(Json(PaymentReceipt {
                outcome: "ignored",
                job_id: None,
                reason: None,
                reason_code: None,
            }));
        }
    };
    let receipt = match record_payment(&state.backend, report).await? {
        PaymentOutcome::Paid(job_id) => PaymentReceipt {
            outcome: "paid",
            job_id: Some(job_id),
            reason: None,
            reason_code: None,
        },
        PaymentOutcome::Unmatched(unmatched) => PaymentReceipt {
            outcome: "unmatched",
            job_id: unmatched.job_id,
            reason: Some(unmatched.reason),
            reason_code: Some(unmatched.reason_code),
        },
    };
    Ok(Json(receipt))
}
