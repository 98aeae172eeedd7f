//! Every HTTP error, in one place: what each failure means to a client, rendered as RFC 9457
//! problem+json. Internals (backend messages) go to the log, never into a response body.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_shared::domain::{JobConflict, ValidationError};
use seatclaim_shared::ports::BackendError;
use serde::Serialize;

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
    /// The idempotency key was used before for a different request (422).
    #[error("this Idempotency-Key was already used by this buyer for a different request")]
    KeyReused,
    /// axum refused the body (size, content type, syntax); the status is axum's.
    #[error("{detail}")]
    Rejected {
        /// axum's status for the rejection.
        status: StatusCode,
        /// axum's description of it.
        detail: String,
    },
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

impl From<JobConflict> for ApiError {
    fn from(conflict: JobConflict) -> Self {
        Self::Conflict(conflict.to_string())
    }
}

/// The RFC 9457 body.
#[derive(Serialize)]
struct Problem {
    #[serde(rename = "type")]
    kind: String,
    title: &'static str,
    status: u16,
    detail: String,
}

impl ApiError {
    /// The status, a stable problem type slug and a title for each cause.
    fn classify(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Self::Invalid(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid-request",
                "The request breaks a rule",
            ),
            Self::BadRequest(_) => (
                StatusCode::BAD_REQUEST,
                "malformed-request",
                "The request is malformed",
            ),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not-found", "Not found"),
            Self::Conflict(_) => (
                StatusCode::CONFLICT,
                "conflict",
                "The request conflicts with the current state",
            ),
            Self::KeyReused => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency-key-reused",
                "Idempotency-Key reused",
            ),
            Self::Rejected { status, .. } => match *status {
                StatusCode::PAYLOAD_TOO_LARGE => (
                    *status,
                    "payload-too-large",
                    "The request body is too large",
                ),
                StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                    (*status, "unsupported-media-type", "The body must be JSON")
                }
                _ => (
                    *status,
                    "malformed-request",
                    "The request body is not acceptable",
                ),
            },
            Self::Backend(error) if error.is_transient() => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "Temporarily unavailable; retry",
            ),
            Self::Backend(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal error",
            ),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, slug, title) = self.classify();
        let detail = match &self {
            Self::Backend(error) => {
                tracing::error!(%error, "request failed in the backend");
                "the service could not complete the request; it is safe to retry with the same Idempotency-Key".to_owned()
            }
            other => other.to_string(),
        };
        let problem = Problem {
            kind: format!("urn:seatclaim:problem:{slug}"),
            title,
            status: status.as_u16(),
            detail,
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
        response
    }
}
