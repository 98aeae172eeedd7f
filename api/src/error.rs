//! Every HTTP error, in one place: what each failure means to a client, rendered as RFC 9457
//! problem+json. Internals (backend messages) go to the log, never into a response body.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_core::domain::{JobConflict, ValidationError};
use seatclaim_core::ports::BackendError;

use crate::auth::AuthError;
use crate::problem::{Problem, ProblemType};

/// A request that could not be served, by cause.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A well-formed request broke a rule (422).
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The request is malformed: bad header, bad JSON (400).
    #[error("{0}")]
    BadRequest(String),
    /// No such thing (404).
    #[error("{0}")]
    NotFound(String),
    /// The action does not fit the resource's state (409).
    #[error("{0}")]
    Conflict(String),
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
            conflict => Self::Conflict(conflict.to_string()),
        }
    }
}

impl ApiError {
    /// The status and the problem type of each cause.
    fn classify(&self) -> (StatusCode, ProblemType) {
        match self {
            Self::Invalid(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                ProblemType::InvalidRequest,
            ),
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, ProblemType::MalformedRequest),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, ProblemType::NotFound),
            Self::Conflict(_) => (StatusCode::CONFLICT, ProblemType::Conflict),
            Self::KeyReused => (
                StatusCode::UNPROCESSABLE_ENTITY,
                ProblemType::IdempotencyKeyReused,
            ),
            Self::AlreadyQueued(_) => (StatusCode::CONFLICT, ProblemType::AlreadyQueued),
            Self::Rejected { status, .. } => match *status {
                StatusCode::PAYLOAD_TOO_LARGE => (*status, ProblemType::PayloadTooLarge),
                StatusCode::METHOD_NOT_ALLOWED => (*status, ProblemType::MethodNotAllowed),
                StatusCode::UNSUPPORTED_MEDIA_TYPE => (*status, ProblemType::UnsupportedMediaType),
                // axum's own mistakes (a route without the parameters its extractor expects).
                status if status.is_server_error() => {
                    (StatusCode::INTERNAL_SERVER_ERROR, ProblemType::Internal)
                }
                StatusCode::UNPROCESSABLE_ENTITY => (*status, ProblemType::MalformedRequest),
                _ => (StatusCode::BAD_REQUEST, ProblemType::MalformedRequest),
            },
            Self::Unauthenticated(_) => (StatusCode::UNAUTHORIZED, ProblemType::Unauthenticated),
            Self::Forbidden { .. } => (StatusCode::FORBIDDEN, ProblemType::Forbidden),
            Self::TooManyRequests { .. } | Self::TooManyLongPolls { .. } => {
                (StatusCode::TOO_MANY_REQUESTS, ProblemType::TooManyRequests)
            }
            Self::Overloaded => (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Overloaded),
            Self::TimedOut => (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Timeout),
            Self::BodyTooSlow(_) => (StatusCode::REQUEST_TIMEOUT, ProblemType::Timeout),
            Self::PaymentRequired(_) => {
                (StatusCode::PAYMENT_REQUIRED, ProblemType::PaymentRequired)
            }
            Self::BadSignature(_) => (StatusCode::BAD_REQUEST, ProblemType::InvalidSignature),
            Self::Backend(error) if error.is_transient() => {
                (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Unavailable)
            }
            Self::Backend(_) => (StatusCode::INTERNAL_SERVER_ERROR, ProblemType::Internal),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, kind) = self.classify();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of each cause (and each status axum rejects with).
    fn one_of_each() -> Vec<ApiError> {
        let rejected = |status| ApiError::Rejected {
            status,
            detail: "rejected".into(),
        };
        vec![
            ApiError::Invalid(ValidationError::new("field", "is wrong")),
            ApiError::BadRequest("bad".into()),
            ApiError::NotFound("missing".into()),
            ApiError::Conflict("clash".into()),
            ApiError::KeyReused,
            ApiError::AlreadyQueued(seatclaim_core::domain::JobId::time_ordered()),
            rejected(StatusCode::BAD_REQUEST),
            rejected(StatusCode::METHOD_NOT_ALLOWED),
            rejected(StatusCode::PAYLOAD_TOO_LARGE),
            rejected(StatusCode::UNSUPPORTED_MEDIA_TYPE),
            rejected(StatusCode::UNPROCESSABLE_ENTITY),
            rejected(StatusCode::INTERNAL_SERVER_ERROR),
            ApiError::Unauthenticated(AuthError::Missing),
            ApiError::Forbidden {
                detail: "no".into(),
                scope: Some("admin".into()),
            },
            ApiError::TooManyRequests { retry_after: 2 },
            ApiError::TooManyLongPolls { held: 4 },
            ApiError::Overloaded,
            ApiError::TimedOut,
            ApiError::BodyTooSlow(std::time::Duration::from_secs(10)),
            ApiError::PaymentRequired(seatclaim_core::domain::Money {
                amount: 1,
                currency: seatclaim_core::domain::Currency::parse("EUR").unwrap(),
            }),
            ApiError::BadSignature(crate::stripe::SignatureError::Stale),
            ApiError::Backend(BackendError::transient("down")),
            ApiError::Backend(BackendError::permanent("broken")),
        ]
    }

    #[test]
    fn every_error_has_a_status_its_problem_type_is_documented_with() {
        for error in one_of_each() {
            // A new cause fails to compile here: add it to `one_of_each` (and the document).
            match &error {
                ApiError::Invalid(_)
                | ApiError::BadRequest(_)
                | ApiError::NotFound(_)
                | ApiError::Conflict(_)
                | ApiError::KeyReused
                | ApiError::AlreadyQueued(_)
                | ApiError::Rejected { .. }
                | ApiError::Unauthenticated(_)
                | ApiError::Forbidden { .. }
                | ApiError::TooManyRequests { .. }
                | ApiError::TooManyLongPolls { .. }
                | ApiError::Overloaded
                | ApiError::TimedOut
                | ApiError::BodyTooSlow(_)
                | ApiError::PaymentRequired(_)
                | ApiError::BadSignature(_)
                | ApiError::Backend(_) => {}
            }
            let (status, kind) = error.classify();
            assert!(
                kind.statuses().contains(&status.as_u16()),
                "{error:?}: {status} with {kind:?}"
            );
            let response = error.into_response();
            assert_eq!(response.status(), status);
            assert_eq!(
                response.headers()[header::CONTENT_TYPE],
                "application/problem+json"
            );
        }
    }
}
