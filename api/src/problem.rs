//! The RFC 9457 problem body every error answers with, and its problem types: one `type` URN per
//! kind of failure, named here once so that the error responses ([`crate::ApiError`]) and the
//! OpenAPI document's `Problem` schema list the same ones.

use seatclaim_core::domain::{JobId, ReasonCode};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, SchemaFormat};

/// The prefix of every problem type.
const URN_PREFIX: &str = "urn:seatclaim:problem:";

/// Declares [`ProblemType`] from one row per type: its doc, its URN's slug, its title and the
/// statuses it comes with. A new problem type is one row here (and its cause in `ApiError`).
macro_rules! problem_types {
    ($($(#[doc = $doc:literal])+ $name:ident => $slug:literal, $title:literal, [$($status:literal),+];)+) => {
        /// Why a request failed, as a client can act on it: the problem's `type`, a stable
        /// identifier.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ProblemType {
            $($(#[doc = $doc])+ $name,)+
        }

        impl ProblemType {
            /// Every problem type, for the document.
            pub const ALL: &'static [Self] = &[$(Self::$name),+];

            /// The last part of the type's URN.
            #[must_use]
            pub fn slug(self) -> &'static str {
                match self {
                    $(Self::$name => $slug,)+
                }
            }

            /// A short human summary, the problem's `title`.
            #[must_use]
            pub fn title(self) -> &'static str {
                match self {
                    $(Self::$name => $title,)+
                }
            }

            /// The statuses a problem of this type comes with.
            #[must_use]
            pub fn statuses(self) -> &'static [u16] {
                match self {
                    $(Self::$name => &[$($status),+],)+
                }
            }
        }
    };
}

problem_types! {
    /// A well-formed request broke a rule.
    InvalidRequest => "invalid-request", "The request breaks a rule", [422];
    /// A bad header, query or body; 422 for JSON of the wrong shape (a missing field, a wrong
    /// type, an unknown field).
    MalformedRequest => "malformed-request", "The request is malformed", [400, 422];
    /// No such thing.
    NotFound => "not-found", "Not found", [404];
    /// The path does not take this method.
    MethodNotAllowed => "method-not-allowed", "Method not allowed", [405];
    /// The action does not fit the resource's state.
    Conflict => "conflict", "The request conflicts with the current state", [409];
    /// The Idempotency-Key was used before for another request.
    IdempotencyKeyReused => "idempotency-key-reused", "Idempotency-Key reused", [422];
    /// The body is over the route's limit.
    PayloadTooLarge => "payload-too-large", "The request body is too large", [413];
    /// The body is not declared as JSON.
    UnsupportedMediaType => "unsupported-media-type", "The body must be JSON", [415];
    /// No valid bearer token.
    Unauthenticated => "unauthenticated", "A valid bearer token is required", [401];
    /// A valid token that may not do this.
    Forbidden => "forbidden", "Not allowed", [403];
    /// The buyer is past its rate.
    TooManyRequests => "too-many-requests", "Too many requests", [429];
    /// Too many requests in flight.
    Overloaded => "overloaded", "Too busy; retry", [503];
    /// The request took too long (503), or its body took too long to arrive (408).
    Timeout => "timeout", "The request timed out; retry", [408, 503];
    /// The backend failed in a way a retry may fix.
    Unavailable => "unavailable", "Temporarily unavailable; retry", [503];
    /// The backend failed in a way a retry will not fix.
    Internal => "internal", "Internal error", [500];
    /// The hold is priced and is confirmed by its payment, not by the buyer.
    PaymentRequired => "payment-required", "The payment provider confirms this hold", [402];
    /// A webhook whose signature is missing, wrong or stale.
    InvalidSignature => "invalid-signature", "The webhook signature is not valid", [400];
    /// The buyer already waits in the event's pre-queue, with another job.
    AlreadyQueued => "already-queued", "Already in the line for the opening", [409];
}

impl ProblemType {
    /// The types a problem with `status` may have.
    pub fn of_status(status: u16) -> impl Iterator<Item = Self> {
        Self::ALL
            .iter()
            .copied()
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
    /// Why, as a stable code a client can match: finer than `type` (a `conflict` says which:
    /// `hold_lapsed`, `wrong_status`, ...), from the same table as a job's `reason_code`.
    pub reason_code: ReasonCode,
    /// The job the problem is about, where one exists (`already-queued`: the buyer's job in the
    /// pre-queue).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = "uuid")]
    pub job_id: Option<JobId>,
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
