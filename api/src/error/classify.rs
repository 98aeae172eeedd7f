//! What each cause of an [`ApiError`] means to a client, decided here once: its HTTP status,
//! its problem type (the problem's `type`) and its reason code (the problem's `reason_code`,
//! a row of the core's `ReasonCode` table, the same table the job rejections' codes are in).

use axum::http::StatusCode;
use seatclaim_core::domain::ReasonCode;

use super::ApiError;
use crate::problem::ProblemType;

impl ApiError {
    /// The status, the problem type and the reason code of each cause.
    pub(super) fn classify(&self) -> (StatusCode, ProblemType, ReasonCode) {
        let invalid = (
            StatusCode::UNPROCESSABLE_ENTITY,
            ProblemType::InvalidRequest,
        );
        let ((status, kind), code) = match self {
            Self::Invalid(_) => (invalid, ReasonCode::InvalidRequest),
            Self::UnknownSeats(_) => (invalid, ReasonCode::SeatUnknown),
            Self::UnknownSection(_) => (invalid, ReasonCode::SectionUnknown),
            Self::Unservable(_) => (invalid, ReasonCode::Unservable),
            Self::BadRequest(_) => (
                (StatusCode::BAD_REQUEST, ProblemType::MalformedRequest),
                ReasonCode::MalformedRequest,
            ),
            Self::NotFound(_) => (
                (StatusCode::NOT_FOUND, ProblemType::NotFound),
                ReasonCode::NotFound,
            ),
            Self::Conflict(conflict) => (
                (StatusCode::CONFLICT, ProblemType::Conflict),
                conflict.code(),
            ),
            Self::EventExists(_) => (
                (StatusCode::CONFLICT, ProblemType::Conflict),
                ReasonCode::EventExists,
            ),
            Self::KeyReused => (
                (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ProblemType::IdempotencyKeyReused,
                ),
                ReasonCode::IdempotencyKeyReused,
            ),
            Self::AlreadyQueued(_) => (
                (StatusCode::CONFLICT, ProblemType::AlreadyQueued),
                ReasonCode::AlreadyQueued,
            ),
            Self::Rejected { status, .. } => rejected(*status),
            Self::Unauthenticated(_) => (
                (StatusCode::UNAUTHORIZED, ProblemType::Unauthenticated),
                ReasonCode::Unauthorized,
            ),
            Self::Forbidden { .. } => (
                (StatusCode::FORBIDDEN, ProblemType::Forbidden),
                ReasonCode::Forbidden,
            ),
            Self::TooManyRequests { .. } => (
                (StatusCode::TOO_MANY_REQUESTS, ProblemType::TooManyRequests),
                ReasonCode::RateLimited,
            ),
            Self::TooManyLongPolls { .. } => (
                (StatusCode::TOO_MANY_REQUESTS, ProblemType::TooManyRequests),
                ReasonCode::TooManyLongPolls,
            ),
            Self::Overloaded | Self::ReadsShed => (
                (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Overloaded),
                ReasonCode::Overloaded,
            ),
            Self::TimedOut => (
                (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Timeout),
                ReasonCode::TimedOut,
            ),
            Self::BodyTooSlow(_) => (
                (StatusCode::REQUEST_TIMEOUT, ProblemType::Timeout),
                ReasonCode::BodyTooSlow,
            ),
            Self::PaymentRequired(_) => (
                (StatusCode::PAYMENT_REQUIRED, ProblemType::PaymentRequired),
                ReasonCode::PaymentRequired,
            ),
            Self::BadSignature(_) => (
                (StatusCode::BAD_REQUEST, ProblemType::InvalidSignature),
                ReasonCode::InvalidSignature,
            ),
            Self::Refused(reason) => (invalid, reason.code),
            Self::CodeExists(_) => (
                (StatusCode::CONFLICT, ProblemType::Conflict),
                ReasonCode::CodeExists,
            ),
            Self::NotConfigured(_) => (
                (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Unavailable),
                ReasonCode::Unavailable,
            ),
            Self::Backend(error) if error.is_transient() => (
                (StatusCode::SERVICE_UNAVAILABLE, ProblemType::Unavailable),
                ReasonCode::Unavailable,
            ),
            Self::Backend(_) => (
                (StatusCode::INTERNAL_SERVER_ERROR, ProblemType::Internal),
                ReasonCode::Internal,
            ),
        };
        (status, kind, code)
    }
}

/// What axum's own refusal of a request (by its status) is to a client.
fn rejected(status: StatusCode) -> ((StatusCode, ProblemType), ReasonCode) {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => (
            (status, ProblemType::PayloadTooLarge),
            ReasonCode::PayloadTooLarge,
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            (status, ProblemType::MethodNotAllowed),
            ReasonCode::MethodNotAllowed,
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            (status, ProblemType::UnsupportedMediaType),
            ReasonCode::UnsupportedMediaType,
        ),
        // axum's own mistakes (a route without the parameters its extractor expects).
        status if status.is_server_error() => (
            (StatusCode::INTERNAL_SERVER_ERROR, ProblemType::Internal),
            ReasonCode::Internal,
        ),
        StatusCode::UNPROCESSABLE_ENTITY => (
            (status, ProblemType::MalformedRequest),
            ReasonCode::MalformedRequest,
        ),
        _ => (
            (StatusCode::BAD_REQUEST, ProblemType::MalformedRequest),
            ReasonCode::MalformedRequest,
        ),
    }
}
