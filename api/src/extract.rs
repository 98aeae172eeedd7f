//! Extractors whose rejections come out as problem+json like every other error.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use seatclaim_core::domain::IdempotencyKey;

use crate::error::ApiError;
use crate::state::AppState;

/// `axum::Json`, but rejected bodies become [`ApiError`]s (so 400/413/415/422 are problem+json),
/// and the body must arrive within `SEATCLAIM_BODY_READ_TIMEOUT_SECS` (408 past it): a client
/// trickling its body would otherwise hold a slot of the in-flight cap for the whole request
/// timeout.
pub struct ApiJson<T>(pub T);

impl<T> FromRequest<AppState> for ApiJson<T>
where
    axum::Json<T>: FromRequest<AppState, Rejection = axum::extract::rejection::JsonRejection>,
    T: Send,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let read = axum::Json::<T>::from_request(request, state);
        Ok(Self(within_body_timeout(state, read).await??.0))
    }
}

/// The raw body (a webhook's, which its signature covers byte for byte; a confirm's, which may
/// be empty), under the same body-read timeout as [`ApiJson`].
pub struct ApiBody(pub axum::body::Bytes);

impl FromRequest<AppState> for ApiBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let read = axum::body::Bytes::from_request(request, state);
        Ok(Self(within_body_timeout(state, read).await??))
    }
}

/// `read`, or 408 once `SEATCLAIM_BODY_READ_TIMEOUT_SECS` has passed without it.
async fn within_body_timeout<F: Future>(state: &AppState, read: F) -> Result<F::Output, ApiError> {
    let limit = state.access.body_read_timeout;
    tokio::time::timeout(limit, read)
        .await
        .map_err(|_| ApiError::BodyTooSlow(limit))
}

/// `axum::extract::Path`, but a path it cannot decode (a parameter that is not UTF-8 once
/// percent-decoded) is a problem+json 400 like every other error, not axum's plain text.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    axum::extract::Path<T>:
        FromRequestParts<S, Rejection = axum::extract::rejection::PathRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(value) =
            axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(Self(value))
    }
}

/// The headers a reservation reads, taken from the request's parts: the `Idempotency-Key` as
/// sent (checked in the handler's turn, after the caller's rate) and the seconds of its
/// `Prefer: wait`. Axum's `HeaderMap` extractor would copy the whole map for every request.
pub struct ReservationHeaders {
    key: Option<HeaderValue>,
    /// The `wait` preference asked for, if a usable one was ([`crate::prefer::wait_seconds`]).
    pub prefer_wait: Option<u64>,
}

impl ReservationHeaders {
    /// The `Idempotency-Key`; missing or malformed is the client's mistake (400).
    pub fn idempotency_key(&self) -> Result<IdempotencyKey, ApiError> {
        let value = self
            .key
            .as_ref()
            .ok_or_else(|| ApiError::BadRequest("the Idempotency-Key header is required".into()))?;
        let text = value
            .to_str()
            .map_err(|_| ApiError::BadRequest("Idempotency-Key must be printable ASCII".into()))?;
        IdempotencyKey::parse(text).map_err(|e| ApiError::BadRequest(e.to_string()))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ReservationHeaders {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self {
            key: parts.headers.get("idempotency-key").cloned(),
            prefer_wait: crate::prefer::wait_seconds(&parts.headers),
        })
    }
}
