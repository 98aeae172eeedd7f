//! The sales channel a reservation is admitted under: an access code's (hashed with the
//! deployment's key, its fast checks answered at once), or a partner token's
//! (`seatclaim/channel:<name>`). The claim's atomic step decides the code's rules again; this
//! is only the fast answer. A code that is no code costs the buyer's rate as much as a burst of
//! requests, so codes cannot be guessed at speed.

use seatclaim_core::domain::{Access, AccessCode, BuyerId, EventId, ReasonCode, unknown_code};

use crate::caller::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// Requests' worth of the buyer's rate a wrong code costs.
const WRONG_CODE_COST: u32 = 5;

/// The access of a reservation of `quantity` seats by `buyer` naming `code`, or made with a
/// partner's token.
pub(super) async fn of_reservation(
    state: &AppState,
    caller: &Caller,
    event_id: &EventId,
    (buyer, quantity): (&BuyerId, usize),
    code: Option<&str>,
) -> Result<Option<Access>, ApiError> {
    let Some(code) = code else {
        return Ok(caller.channel().map(|channel| Access {
            channel,
            code: None,
        }));
    };
    let key = state.access.code_key.as_ref().ok_or_else(|| {
        ApiError::NotConfigured("access codes need SEATCLAIM_ACCESS_CODE_KEY".into())
    })?;
    let code = AccessCode::parse(code)?;
    let hash = key.hash(event_id, &code);
    let now = state.backend.clock.now();
    let standing = state.backend.catalog.code(event_id, &hash, now).await?;
    let Some(standing) = standing else {
        state.access.buyers.spend(buyer, WRONG_CODE_COST);
        return Err(ApiError::Refused(unknown_code()));
    };
    let used = standing.held.saturating_add(standing.sold);
    if let Err(reason) = standing.record.admits(buyer, quantity, used, now) {
        if reason.code == ReasonCode::AccessCodeRevoked {
            state.access.buyers.spend(buyer, WRONG_CODE_COST);
        }
        return Err(ApiError::Refused(reason));
    }
    Ok(Some(Access {
        channel: standing.record.terms.channel,
        code: Some(hash),
    }))
}
