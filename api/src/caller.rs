//! The caller of a request, as the [`Caller`] extractor establishes it, and what a caller may
//! do: reserve as itself, see and settle its own jobs, and (with the admin scope) create events
//! and read every job. With authentication off every caller is [`Caller::Open`], as before.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use seatclaim_core::domain::{BuyerId, Job, ValidationError};
use seatclaim_core::identity::PAYMENTS_SCOPE;

use crate::auth::{AuthError, Identity};
use crate::error::ApiError;
use crate::state::AppState;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Authentication is off: the body's `buyer_id` is believed and every job is visible.
    Open,
    /// A validated token's identity.
    Signed(Identity),
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Some(auth) = &state.access.auth else {
            return Ok(Self::Open);
        };
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .ok_or(ApiError::Unauthenticated(AuthError::Missing))?;
        let token = header
            .to_str()
            .ok()
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or_else(|| {
                ApiError::Unauthenticated(AuthError::Invalid(
                    "the Authorization header is not `Bearer <token>`".into(),
                ))
            })?;
        let identity = auth
            .identify(token)
            .await
            .map_err(ApiError::Unauthenticated)?;
        Ok(Self::Signed(identity))
    }
}

impl Caller {
    /// The sales channel a partner's token reserves under; none with authentication off.
    #[must_use]
    pub fn channel(&self) -> Option<seatclaim_core::domain::ChannelName> {
        match self {
            Self::Open => None,
            Self::Signed(identity) => identity.channel.clone(),
        }
    }

    /// The buyer a reservation is for: the token's subject (a `buyer_id` in the body must be
    /// that subject, 403 otherwise), or with authentication off the body's `buyer_id`.
    pub fn buyer(&self, claimed: Option<&str>) -> Result<BuyerId, ApiError> {
        match (self, claimed) {
            (Self::Open, Some(claimed)) => Ok(BuyerId::parse(claimed)?),
            (Self::Open, None) => Err(ValidationError::new("buyer_id", "is required").into()),
            (Self::Signed(identity), Some(claimed)) if claimed != identity.buyer.as_str() => {
                Err(ApiError::Forbidden {
                    detail: "buyer_id must be the token's subject".into(),
                    scope: None,
                })
            }
            (Self::Signed(identity), _) => Ok(identity.buyer.clone()),
        }
    }

    /// Whose share of the long-poll slots a waiting request takes: a buyer token's subject;
    /// with authentication off, `claimed` (a reservation's `buyer_id`; a job's GET has none,
    /// and takes from the API's cap alone). Admin and payments tokens are the operators' and
    /// the payment service's, trusted with many waits: they take from the API's cap alone.
    #[must_use]
    pub fn long_poll_share<'a>(&'a self, claimed: Option<&'a BuyerId>) -> Option<&'a BuyerId> {
        match self {
            Self::Open => claimed,
            Self::Signed(identity) if identity.admin || identity.payments => None,
            Self::Signed(identity) => Some(&identity.buyer),
        }
    }

    /// Whether the caller may read `job`: its buyer, or an admin.
    #[must_use]
    pub fn may_read(&self, job: &Job) -> bool {
        match self {
            Self::Open => true,
            Self::Signed(identity) => identity.admin || identity.buyer == job.buyer_id,
        }
    }

    /// Whether the caller may confirm or cancel `job`: its buyer; and a payment service
    /// (the payments scope) confirming any buyer's job with its payment (`paying`).
    #[must_use]
    pub fn may_settle(&self, job: &Job, paying: bool) -> bool {
        match self {
            Self::Open => true,
            Self::Signed(identity) => {
                identity.buyer == job.buyer_id || (paying && identity.payments)
            }
        }
    }

    /// Passes payment services (and everyone with authentication off); 403 for other tokens.
    pub fn require_payments(&self) -> Result<(), ApiError> {
        match self {
            Self::Signed(identity) if !identity.payments => Err(ApiError::Forbidden {
                detail: format!("a confirm with a payment needs the {PAYMENTS_SCOPE} scope"),
                scope: Some(PAYMENTS_SCOPE.to_owned()),
            }),
            _ => Ok(()),
        }
    }

    /// Passes admins (and everyone with authentication off); 403 for other tokens.
    pub fn require_admin(&self, admin_scope: &str) -> Result<(), ApiError> {
        match self {
            Self::Signed(identity) if !identity.admin => Err(ApiError::Forbidden {
                detail: format!("this needs the {admin_scope} scope"),
                scope: Some(admin_scope.to_owned()),
            }),
            _ => Ok(()),
        }
    }
}
