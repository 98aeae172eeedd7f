//! Every HTTP error, in one place: what each failure means to a client, rendered as RFC 9457
//! problem+json. Internals (backend messages) go to the log, never into a response body.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_core::domain::{EventId, JobConflict, ValidationError};
use seatclaim_core::ports::BackendError;

use crate::auth::AuthError;
use crate::problem::Problem;

/// A request that could not be served, by cause.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A well-formed request broke a rule (422).
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The request is malformed: bad header, bad JSON (400).
    #[error("{0}")]
    BadRequest(String),
    /// The request names seats its event does not have (422).
    #[error(transparent)]
    UnknownSeats(ValidationError),
    /// The request names a section its event does not have (422).
    #[error(transparent)]
    UnknownSection(ValidationError),
    /// The event cannot seat the request as asked, whatever is free (422).
    #[error(transparent)]
    Unservable(ValidationError),
    /// No such thing (404).
    #[error("{0}")]
    NotFound(String),
    /// The action does not fit the job's state (409).
    #[error(transparent)]
    Conflict(JobConflict),
    /// An event with this id exists already (409).
    #[error("event {0} already exists")]
    EventExists(EventId),
    /// The buyer already has an intent in the event's pre-queue, this job (409).
    #[error(
        "this buyer already waits in the line for the sale's opening with job {0}; one request per buyer until it opens"
    )]
    AlreadyQueued(seatclaim_core::domain::JobId),
    /// The idempotency key was used before for a different request (422).
    #[error("this Idempotency-Key was already used by this buyer for a different request")]
    KeyReused,
    /// axum refused the request (the body's size, content type or syntax, the query) or its
    /// method (405); the status is axum's.
    #[error("{detail}")]
    Rejected {
        /// axum's status for the rejection.
        status: StatusCode,
        /// axum's description of it.
        detail: String,
    },
    /// No valid bearer token (401, with a `WWW-Authenticate` challenge).
    #[error(transparent)]
    Unauthenticated(AuthError),
    /// A valid token that may not do this (403); `scope` names the scope it lacks.
    #[error("{detail}")]
    Forbidden {
        /// What is not allowed.
        detail: String,
        /// The scope that would allow it, if one would.
        scope: Option<String>,
    },
    /// The buyer sends reservations faster than its rate allows (429).
    #[error("too many reservation requests from this buyer; retry after {retry_after} s")]
    TooManyRequests {
        /// Whole seconds until the next request is allowed.
        retry_after: u64,
    },
    /// The buyer already holds `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` waiting long polls (429,
    /// `Retry-After: 1`): one buyer may not take the slots every buyer waits in.
    #[error(
        "this buyer already has {held} long polls waiting; retry after one ends, or poll without \
         `wait`"
    )]
    TooManyLongPolls {
        /// The long polls the buyer holds.
        held: usize,
    },
    /// More requests are in flight than the API takes at once (503, load shedding).
    #[error("the service is at capacity; retry shortly")]
    Overloaded,
    /// Seat-map reads spent this process's read budget for as long as this one could wait
    /// (503, `Retry-After: 1`): reservations keep the machine.
    #[error(
        "too many seat-map reads at once; retry after Retry-After, or keep the map you have (it \
         is advisory: a reservation re-checks every seat)"
    )]
    ReadsShed,
    /// The request took longer than the request timeout (503).
    #[error("the request took too long; retry")]
    TimedOut,
    /// A priced hold confirmed without its payment where a payment provider confirms (402).
    #[error("this hold costs {0}; it is confirmed when the payment provider reports its payment")]
    PaymentRequired(seatclaim_core::domain::Money),
    /// A webhook that does not prove it comes from the payment provider (400).
    #[error(transparent)]
    BadSignature(#[from] crate::stripe::SignatureError),
    /// The request's body did not arrive within the body-read timeout (408).
    #[error("the request body did not arrive within {} s", .0.as_secs())]
    BodyTooSlow(std::time::Duration),
    /// A well-formed request the domain refuses for the reason it names: an access code that
    /// does not admit, a channel the event lacks (422, the reason's own code).
    #[error("{}", .0.text)]
    Refused(seatclaim_core::domain::Reason),
    /// One of the access codes exists already for the event (409).
    #[error("an access code of the request exists already for event {0}")]
    CodeExists(EventId),
    /// A feature this deployment is not configured for (503): what to set.
    #[error("{0}")]
    NotConfigured(String),
    /// The backend failed; 503 when a retry may help, 500 when it will not.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        Self::Rejected {
            status: rejection.status(),
            detail: rejection.body_text(),
        }
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> Self {
        Self::Rejected {
            status: rejection.status(),
            detail: rejection.body_text(),
        }
    }
}

impl From<axum::extract::rejection::BytesRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::BytesRejection) -> Self {
        Self::Rejected {
            status: rejection.status(),
            detail: rejection.body_text(),
        }
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::PathRejection) -> Self {
        Self::Rejected {
            status: rejection.status(),
            detail: rejection.body_text(),
        }
    }
}

impl From<JobConflict> for ApiError {
    fn from(conflict: JobConflict) -> Self {
        match conflict {
            // The settlement's own step found the hold priced and no payment: the same answer
            // as the edge's early 402.
            JobConflict::PaymentRequired { due } => Self::PaymentRequired(due),
            conflict => Self::Conflict(conflict),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, kind, reason_code) = self.classify();
        let detail = match &self {
            Self::Backend(error) => {
                tracing::error!(%error, "request failed in the backend");
                "the service could not complete the request; it is safe to retry with the same Idempotency-Key".to_owned()
            }
            other => other.to_string(),
        };
        let problem = Problem {
            kind: kind.urn(),
            title: kind.title(),
            status: status.as_u16(),
            detail,
            reason_code,
            job_id: match &self {
                Self::AlreadyQueued(job_id) => Some(*job_id),
                _ => None,
            },
        };
        let mut response = (status, Json(problem)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/problem+json"),
        );
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        }
        if let Self::BodyTooSlow(_) = self {
            // The rest of the body is never read: the connection cannot carry another request.
            response.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
        }
        if let Some((name, value)) = self.challenge() {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

impl ApiError {
    /// The header a 401, 403 or 429 carries: the RFC 6750 challenge, or `Retry-After`.
    fn challenge(&self) -> Option<(header::HeaderName, header::HeaderValue)> {
        let value = match self {
            Self::Unauthenticated(AuthError::Missing) => r#"Bearer realm="seatclaim""#.to_owned(),
            Self::Unauthenticated(AuthError::Invalid(why)) => format!(
                r#"Bearer realm="seatclaim", error="invalid_token", error_description="{}""#,
                why.replace('"', "'")
            ),
            Self::Forbidden {
                scope: Some(scope), ..
            } => {
                format!(r#"Bearer realm="seatclaim", error="insufficient_scope", scope="{scope}""#)
            }
            Self::TooManyRequests { retry_after } => {
                let value = header::HeaderValue::from_str(&retry_after.to_string()).ok()?;
                return Some((header::RETRY_AFTER, value));
            }
            Self::TooManyLongPolls { .. } => {
                return Some((header::RETRY_AFTER, header::HeaderValue::from_static("1")));
            }
            _ => return None,
        };
        let value = header::HeaderValue::from_str(&value).ok()?;
        Some((header::WWW_AUTHENTICATE, value))
    }
}

mod classify;
#[cfg(test)]
mod tests;
