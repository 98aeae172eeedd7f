//! Every HTTP error, in one place: what each failure means to a client, rendered as RFC 9457
//! problem+json. Internals (backend messages) go to the log, never into a response body.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_shared::domain::{JobConflict, ValidationError};
use seatclaim_shared::ports::BackendError;
use serde::Serialize;

use crate::auth::AuthError;

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
    /// More requests are in flight than the API takes at once (503, load shedding).
    #[error("the service is at capacity; retry shortly")]
    Overloaded,
    /// The request took longer than the request timeout (503).
    #[error("the request took too long; retry")]
    TimedOut,
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
            Self::Unauthenticated(_) => (
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "A valid bearer token is required",
            ),
            Self::Forbidden { .. } => (StatusCode::FORBIDDEN, "forbidden", "Not allowed"),
            Self::TooManyRequests { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-requests",
                "Too many requests",
            ),
            Self::Overloaded => (
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                "Too busy; retry",
            ),
            Self::TimedOut => (
                StatusCode::SERVICE_UNAVAILABLE,
                "timeout",
                "The request timed out; retry",
            ),
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
            _ => return None,
        };
        let value = header::HeaderValue::from_str(&value).ok()?;
        Some((header::WWW_AUTHENTICATE, value))
    }
}
