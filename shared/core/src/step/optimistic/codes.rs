//! An access code in the optimistic step: read with its count before the decision, checked by
//! the domain (`CodeRecord::admits`), and written into the hold's plan as a conditional count of
//! its own (and, for a binding code, its binding), so racing claims on one code cannot pass its
//! `max_seats` whatever the processes, exactly as the buyer's limit.

use jiff::Timestamp;

use super::settle::settle_write;
use crate::domain::{Intent, JobAction, Reason, ReasonCode, Tender, unknown_code};
use crate::ports::BackendError;
use crate::step::{Commit, CountChange, Write};

/// The counts a claim's plan writes under a condition: the buyer's (`buyer`: the most seats
/// the buyer may count before it, under a seat limit) and its access code's.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// The buyer's ceiling.
    pub(super) buyer: Option<u32>,
    /// The code's gate.
    pub(super) code: Option<CodeGate>,
}

/// What a claim's plan must write for its code.
#[derive(Debug, Clone, Copy)]
pub(super) struct CodeGate {
    /// The most seats the code may count before this claim.
    ceiling: u32,
    /// Whether this claim binds the code to its buyer.
    binds: bool,
}

impl CodeGate {
    /// The code's writes of a hold of `seats` until `until`.
    pub(super) fn hold(self, seats: u32, until: Timestamp) -> Vec<Write> {
        let count = CountChange::Hold {
            seats,
            until,
            ceiling: self.ceiling,
        };
        let mut writes = vec![Write::CodeCount(count)];
        if self.binds {
            writes.push(Write::BindCode);
        }
        writes
    }

    /// The code's write of a wait in line for `seats`.
    pub(super) fn wait(self, seats: u32) -> Write {
        Write::CodeCount(CountChange::Wait {
            seats,
            ceiling: self.ceiling,
        })
    }
}

/// Checks the intent's access code at `now`: `Ok(None)` for an intent without one, the gate its
/// plan must write, or the reason it is refused. A code its lapsed holds still count full gets
/// them expired (the sweeper's settlement) and is read once more.
pub(super) async fn gate(
    store: &impl Commit,
    intent: &Intent,
    now: Timestamp,
) -> Result<Result<Option<CodeGate>, Reason>, BackendError> {
    let Some(hash) = intent
        .access
        .as_ref()
        .and_then(|access| access.code.as_ref())
    else {
        return Ok(Ok(None));
    };
    let quantity = intent.request.quantity();
    for round in 0..2 {
        let Some((code, count)) = store.code(&intent.event_id, hash, now).await? else {
            return Ok(Err(unknown_code()));
        };
        let used = count.seats.unwrap_or(0);
        match code.admits(&intent.buyer_id, quantity, used, now) {
            Ok(()) => {
                let wanted = u32::try_from(quantity).unwrap_or(u32::MAX);
                let ceiling = code.terms.max_seats.saturating_sub(wanted);
                let binds = code.binds(&intent.buyer_id).is_some();
                return Ok(Ok(Some(CodeGate { ceiling, binds })));
            }
            Err(reason)
                if round == 0
                    && reason.code == ReasonCode::AccessCodeUsedUp
                    && !count.lapsed.is_empty() =>
            {
                for job_id in count.lapsed {
                    settle_write(store, job_id, JobAction::Expire, &Tender::Nothing).await?;
                }
            }
            Err(reason) => return Ok(Err(reason)),
        }
    }
    Ok(Err(used_up()))
}

/// The reason of a join that lost its code's condition: the code's seats were taken meanwhile.
pub(super) fn used_up() -> Reason {
    Reason::new(ReasonCode::AccessCodeUsedUp, "access code used up")
}
