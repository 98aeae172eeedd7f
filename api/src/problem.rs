//! The RFC 9457 problem body every error answers with, and its problem types: one `type` URN per
//! kind of failure, named here once so that the error responses ([`crate::ApiError`]) and the
//! OpenAPI document's `Problem` schema list the same ones.

use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, SchemaFormat};

/// The prefix of every problem type.
const URN_PREFIX: &str = "urn:seatclaim:problem:";

/// Why a request failed, as a client can act on it: the problem's `type`, a stable identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemType {
    /// A well-formed request broke a rule (422).
    InvalidRequest,
    /// A bad header, query or body (400, or 422 for JSON of the wrong shape).
    MalformedRequest,
    /// No such thing (404).
    NotFound,
    /// The path does not take this method (405).
    MethodNotAllowed,
    /// The action does not fit the resource's state (409).
    Conflict,
    /// The Idempotency-Key was used before for another request (422).
    IdempotencyKeyReused,
    /// The body is over the route's limit (413).
    PayloadTooLarge,
    /// The body is not declared as JSON (415).
    UnsupportedMediaType,
    /// No valid bearer token (401).
    Unauthenticated,
    /// A valid token that may not do this (403).
    Forbidden,
    /// The buyer is past its rate (429).
    TooManyRequests,
    /// Too many requests in flight (503).
    Overloaded,
    /// The request took too long (503), or its body took too long to arrive (408).
    Timeout,
    /// The backend failed in a way a retry may fix (503).
    Unavailable,
    /// The backend failed in a way a retry will not fix (500).
    Internal,
    /// The hold is priced and is confirmed by its payment, not by the buyer (402).
    PaymentRequired,
    /// A webhook whose signature is missing, wrong or stale (400).
    InvalidSignature,
}

impl ProblemType {
    /// Every problem type, for the document.
    pub const ALL: [Self; 17] = [
        Self::InvalidRequest,
        Self::MalformedRequest,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::Conflict,
        Self::IdempotencyKeyReused,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
        Self::Unauthenticated,
        Self::Forbidden,
        Self::TooManyRequests,
        Self::Overloaded,
        Self::Timeout,
        Self::Unavailable,
        Self::Internal,
        Self::PaymentRequired,
        Self::InvalidSignature,
    ];

    /// The last part of the type's URN.
    #[must_use]
    pub fn slug(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid-request",
            Self::MalformedRequest => "malformed-request",
            Self::NotFound => "not-found",
            Self::MethodNotAllowed => "method-not-allowed",
            Self::Conflict => "conflict",
            Self::IdempotencyKeyReused => "idempotency-key-reused",
            Self::PayloadTooLarge => "payload-too-large",
            Self::UnsupportedMediaType => "unsupported-media-type",
            Self::Unauthenticated => "unauthenticated",
            Self::Forbidden => "forbidden",
            Self::TooManyRequests => "too-many-requests",
            Self::Overloaded => "overloaded",
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
            Self::PaymentRequired => "payment-required",
            Self::InvalidSignature => "invalid-signature",
        }
    }

    /// A short human summary, the problem's `title`.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::InvalidRequest => "The request breaks a rule",
            Self::MalformedRequest => "The request is malformed",
            Self::NotFound => "Not found",
            Self::MethodNotAllowed => "Method not allowed",
            Self::Conflict => "The request conflicts with the current state",
            Self::IdempotencyKeyReused => "Idempotency-Key reused",
            Self::PayloadTooLarge => "The request body is too large",
            Self::UnsupportedMediaType => "The body must be JSON",
            Self::Unauthenticated => "A valid bearer token is required",
            Self::Forbidden => "Not allowed",
            Self::TooManyRequests => "Too many requests",
            Self::Overloaded => "Too busy; retry",
            Self::Timeout => "The request timed out; retry",
            Self::Unavailable => "Temporarily unavailable; retry",
            Self::Internal => "Internal error",
            Self::PaymentRequired => "The payment provider confirms this hold",
            Self::InvalidSignature => "The webhook signature is not valid",
        }
    }

    /// The statuses a problem of this type comes with.
    #[must_use]
    pub fn statuses(self) -> &'static [u16] {
        match self {
            Self::InvalidRequest | Self::IdempotencyKeyReused => &[422],
            // 422: JSON of the wrong shape (a missing field, a wrong type, an unknown field).
            Self::MalformedRequest => &[400, 422],
            Self::NotFound => &[404],
            Self::MethodNotAllowed => &[405],
            Self::Conflict => &[409],
            Self::PayloadTooLarge => &[413],
            Self::UnsupportedMediaType => &[415],
            Self::Unauthenticated => &[401],
            Self::Forbidden => &[403],
            Self::TooManyRequests => &[429],
            Self::Timeout => &[408, 503],
            Self::Overloaded | Self::Unavailable => &[503],
            Self::Internal => &[500],
            Self::PaymentRequired => &[402],
            Self::InvalidSignature => &[400],
        }
    }

    /// The types a problem with `status` may have.
    pub fn of_status(status: u16) -> impl Iterator<Item = Self> {
        Self::ALL
            .into_iter()
            .filter(move |kind| kind.statuses().contains(&status))
    }

    /// The problem's `type` member: `urn:seatclaim:problem:<slug>`.
    #[must_use]
    pub fn urn(self) -> String {
        format!("{URN_PREFIX}{}", self.slug())
    }
}

/// An RFC 9457 problem: every error of this API is one, served as `application/problem+json`.
/// `type` is one of the `urn:seatclaim:problem:<slug>` URNs below, whatever the status; a 5xx
/// `detail` never carries internals.
#[derive(Serialize, ToSchema)]
pub struct Problem {
    /// What kind of failure this is.
    #[serde(rename = "type")]
    #[schema(schema_with = problem_type_schema)]
    pub kind: String,
    /// A short human summary of the kind, the same for every problem of that kind.
    pub title: &'static str,
    /// The HTTP status, repeated.
    #[schema(minimum = 400, maximum = 599)]
    pub status: u16,
    /// What went wrong with this request, for a human.
    pub detail: String,
}

/// The `type` member's schema: an enum of every problem type's URN.
fn problem_type_schema() -> impl Into<RefOr<Schema>> {
    let urns: Vec<String> = ProblemType::ALL.iter().map(|kind| kind.urn()).collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::Custom("uri".into())))
        .description(Some(
            "The problem type, `urn:seatclaim:problem:<slug>`: a stable identifier to act on.",
        ))
        .enum_values(Some(urns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_has_its_own_slug() {
        let mut slugs: Vec<&str> = ProblemType::ALL.iter().map(|kind| kind.slug()).collect();
        slugs.sort_unstable();
        slugs.dedup();
        assert_eq!(slugs.len(), ProblemType::ALL.len());
    }
}
