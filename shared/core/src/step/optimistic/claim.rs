//! Deciding a claim without an interactive transaction: read (perhaps stale), decide, plan the
//! hold with every condition the decision rests on, commit; a seat lost to another writer is
//! left out and the claim chooses again, within a bound.

use std::collections::HashSet;

use jiff::Timestamp;

use super::codes::{self, Limits};
use super::lines::{self, Lines, Refused};
use super::settle::settle_write;
use crate::domain::{
    BuyerId, ClaimDecision, EventId, Intent, Job, JobAction, Reason, SaleTerms, Seat, SeatId,
    SeatRequest, Section, Tender,
};
use crate::ports::{BackendError, ClaimOutcome};
use crate::step::{Commit, Decided};
use crate::step::{Committed, SetAside};
use crate::step::{CountChange, Misses, Plan, SeatChange, SeatCondition, Write};

/// Rounds of a section claim whose candidates were taken between the (perhaps stale) read and
/// the write: each tries fresh ones; past the last, the intent is retried later.
const SECTION_ROUNDS: usize = 12;

/// Pauses of one claim for this process's other claims ([`Commit::pause`] each).
const AWAITS: usize = 100;

/// How an attempt to hold ended.
pub(super) enum Attempt {
    /// Held, rejected, waiting, or decided by another delivery.
    Decided(Box<Decided>),
    /// The buyer's count left no room (only under a seat limit); the rejection's reason.
    OverLimit(Reason),
}

/// How one commit of a hold ended.
enum Written {
    /// The job is decided (by this write or an earlier delivery).
    Decided(Box<Decided>),
    /// These seats were taken since they were read.
    SeatTaken(Vec<SeatId>),
    /// Seats beside the block that another claim of this process was writing are not taken
    /// (yet, or its write failed).
    Awaited,
    /// The buyer's seat count left no room.
    OverLimit,
    /// The access code's count left no room, or it was bound to another buyer.
    Refused(Reason),
}

/// The hold a claim decided, with what its plan must check.
struct Hold {
    decision: ClaimDecision,
    /// Seats beside a block that this process's other claims were writing: they must be taken.
    awaited: Vec<SeatId>,
}

/// Decides one intent: the buyer's limit, then the seats as read, written on condition that
/// they are still claimable; or the job's place in its section's line. A job decided before (a
/// redelivery) changes nothing.
pub async fn claim_one(
    store: &impl Commit,
    intent: &Intent,
    now: Timestamp,
) -> Result<Decided, BackendError> {
    // The job as admission stored it: an undecided job is exactly the intent's PENDING job, and
    // every plan is conditioned on it still being PENDING, so it is not read first (one request
    // fewer per claim). A redelivery of a decided job fails that condition, and only then is
    // the job read to say how it was decided.
    let job = Job::pending(intent);
    let terms = store.terms(&intent.event_id).await?.ok_or_else(|| {
        BackendError::permanent(format!("intent for unknown event {}", intent.event_id))
    })?;
    let ceiling = match terms.ceiling(intent) {
        Ok(ceiling) => ceiling,
        Err(reason) => return reject(store, &job, &reason, now).await,
    };
    let code = match codes::gate(store, intent, now).await? {
        Ok(code) => code,
        Err(reason) => return reject(store, &job, &reason, now).await,
    };
    let limits = Limits {
        buyer: ceiling,
        code,
    };
    let mut expired = false;
    loop {
        match try_hold(store, intent, &job, &terms, limits, now).await? {
            Attempt::Decided(decided) => return Ok(*decided),
            // Lapsed holds still count until expired: expire them, then try once more.
            Attempt::OverLimit(_)
                if !expired
                    && expire_lapsed(store, &job.event_id, &job.buyer_id, ceiling, now).await? =>
            {
                expired = true;
            }
            Attempt::OverLimit(reason) => return reject(store, &job, &reason, now).await,
        }
    }
}

/// Decides and writes a hold of the seats as read, under the buyer's and the code's `limits`.
async fn try_hold(
    store: &impl Commit,
    intent: &Intent,
    job: &Job,
    terms: &SaleTerms,
    limits: Limits,
    now: Timestamp,
) -> Result<Attempt, BackendError> {
    // An exact claim that loses a race is lost; a section claim tries other free seats, without
    // those it lost (a stale read may still list them).
    let section = matches!(intent.request, SeatRequest::Section { .. });
    let mut lost: HashSet<SeatId> = HashSet::new();
    let rounds = if section { SECTION_ROUNDS } else { 1 };
    // A pause for this process's other claims spends no round: it ends when their writes do,
    // bounded all the same.
    let (mut round, mut waits) = (0, 0);
    while round < rounds && waits <= AWAITS {
        let mut candidates = store.candidates(intent, now).await?;
        candidates.retain(|seat| !lost.contains(&seat.seat_id));
        let lines = lines::of_claim(store, intent, terms, &candidates, now).await?;
        let Some((hold, _aside)) = choose(store, intent, terms, &lines, candidates, now) else {
            waits += 1;
            store.pause().await;
            continue;
        };
        let written = match hold.decision {
            ClaimDecision::Hold { .. } => write_hold(store, intent, job, hold, limits, now).await?,
            ClaimDecision::Reject { reason } => {
                return reject(store, job, &reason, now).await.map(decided);
            }
            ClaimDecision::Waitlist => {
                let forms = (intent.request.section()).is_some_and(|s| lines.forming.contains(s));
                return Ok(match lines::join(store, job, now, forms, limits).await? {
                    Ok(joined) => decided(joined),
                    Err(Refused::OverLimit) => Attempt::OverLimit(terms.limit_reason()),
                    Err(Refused::Code(reason)) => decided(reject(store, job, &reason, now).await?),
                });
            }
        };
        match written {
            Written::Decided(decided) => return Ok(Attempt::Decided(decided)),
            Written::OverLimit => return Ok(Attempt::OverLimit(terms.limit_reason())),
            Written::Refused(reason) => {
                return reject(store, job, &reason, now).await.map(decided);
            }
            Written::SeatTaken(taken) => {
                round += 1;
                lost.extend(taken);
            }
            // Another claim of this process has not committed the seats beside: give it the
            // time its write takes, then choose again.
            Written::Awaited => {
                waits += 1;
                store.pause().await;
            }
        }
    }
    if section {
        // The section still had free seats at the last look: never a rejection, a retry.
        return Err(BackendError::transient(format!(
            "job {}: section claims kept losing races for its free seats",
            job.job_id
        )));
    }
    reject(store, job, &Reason::seat_unavailable(), now)
        .await
        .map(decided)
}

/// The domain's decision on the candidates; a section claim's among the seats no other claim of
/// this process is writing, which it sets aside for this one until its write ends. `None`: only
/// seats other claims are writing would do, and their writes may yet fail.
fn choose<'a>(
    store: &'a impl Commit,
    intent: &Intent,
    terms: &SaleTerms,
    lines: &Lines,
    candidates: Vec<Seat>,
    now: Timestamp,
) -> Option<(Hold, Option<SetAside<'a>>)> {
    // A release and its serving are two steps without an interactive transaction, so seats
    // given back beside a line may not have been offered to it yet: a section request there
    // joins the line's end and the line is served at once (`lines::join`), first fit, which
    // gives the newcomer those seats only if nobody ahead fits them.
    let lined = |s: &Section| lines.lined.contains(s);
    let joins = terms.waits_in_lines(intent) && (intent.request.section()).is_some_and(lined);
    let decide = |seats: &[Seat]| {
        let seats = if joins { &[][..] } else { seats };
        let decided = terms.decide_intent(intent, seats, now, lined);
        let chosen = match &decided {
            ClaimDecision::Hold { seat_ids, .. } => seat_ids.clone(),
            _ => Vec::new(),
        };
        (decided, chosen)
    };
    let SeatRequest::Section { together, .. } = intent.request else {
        let (decision, _) = decide(&candidates);
        let awaited = Vec::new();
        return Some((Hold { decision, awaited }, None));
    };
    let chosen = (candidates, together, now);
    let (decision, aside, awaited) = store.claiming().choose(&intent.event_id, chosen, decide)?;
    Some((Hold { decision, awaited }, Some(aside)))
}

/// The commit of a hold: the seats (each claimable), a check that each guard is still
/// claimable and each awaited seat taken, the job's move from PENDING with its event and, under
/// a seat limit, the buyer's count. A guard taken meanwhile counts as a seat taken: the claim
/// chooses again without it.
async fn write_hold(
    store: &impl Commit,
    intent: &Intent,
    job: &Job,
    Hold { decision, awaited }: Hold,
    limits: Limits,
    now: Timestamp,
) -> Result<Written, BackendError> {
    let ClaimDecision::Hold {
        seat_ids,
        until,
        amount_due,
        guards,
    } = decision
    else {
        return Err(BackendError::permanent("a hold's plan without a hold"));
    };
    let Ok(held) = job.hold(seat_ids.clone(), until, amount_due, now) else {
        return Ok(Written::Decided(Box::new((
            ClaimOutcome::AlreadyDecided(job.status),
            None,
        ))));
    };
    let seat = |seat_id: &SeatId, change, condition| Write::Seat {
        seat_id: seat_id.clone(),
        change,
        condition,
    };
    let mut writes: Vec<Write> = (seat_ids.iter())
        .map(|s| seat(s, SeatChange::Hold { until }, SeatCondition::Claimable))
        .chain(
            guards
                .iter()
                .map(|s| seat(s, SeatChange::Check, SeatCondition::Claimable)),
        )
        .chain(
            awaited
                .iter()
                .map(|s| seat(s, SeatChange::Check, SeatCondition::Taken)),
        )
        .collect();
    let outcome = ClaimOutcome::of(&held);
    writes.push(Write::Job(Box::new(held)));
    let seats = u32::try_from(seat_ids.len()).unwrap_or(u32::MAX);
    if let Some(ceiling) = limits.buyer {
        writes.push(Write::Count(CountChange::Hold {
            seats,
            until,
            ceiling,
        }));
    }
    if let Some(code) = limits.code {
        writes.extend(code.hold(seats, until));
    }
    let plan = Plan::new(job, now, writes);
    let failed = match store.commit(&plan).await? {
        Committed::Written(_) => return Ok(Written::Decided(Box::new((outcome, None)))),
        Committed::Failed(failed) => Misses::of(&plan, &failed),
    };
    Ok(if failed.job {
        Written::Decided(Box::new(store.decided(job.job_id, now).await?))
    } else if failed.count {
        Written::OverLimit
    } else if failed.code_count || failed.code_bound {
        // Which of the code's rules the race broke (its seats, or its binding), read afresh.
        match codes::gate(store, intent, now).await? {
            Err(reason) => Written::Refused(reason),
            Ok(_) => Written::SeatTaken(failed.seats),
        }
    } else if failed.seats.is_empty() && !failed.untaken.is_empty() {
        Written::Awaited
    } else {
        Written::SeatTaken(failed.seats)
    })
}

/// Rejects a PENDING job for `reason` (a store may leave its event to the caller to record),
/// unless another delivery decided it first.
pub(super) async fn reject(
    store: &impl Commit,
    job: &Job,
    reason: &Reason,
    now: Timestamp,
) -> Result<Decided, BackendError> {
    let Ok(rejected) = job.reject(reason, now) else {
        return Ok((ClaimOutcome::AlreadyDecided(job.status), None));
    };
    let outcome = ClaimOutcome::of(&rejected);
    let plan = Plan::new(job, now, vec![Write::Job(Box::new(rejected))]);
    match store.commit(&plan).await? {
        Committed::Written(unrecorded) => Ok((outcome, unrecorded)),
        Committed::Failed(_) => store.decided(job.job_id, now).await,
    }
}

/// Expires `buyer`'s holds in `event_id` that lapsed by `now` but still count, and says whether
/// the count may now leave room for a claim under `ceiling` (none: no limit): it does if a hold
/// was expired here, or if the count already has room (another process expired or gave back a
/// hold since the refused claim). Each expiry is the sweeper's settlement, so a race with it
/// changes nothing; the seats go to a line at the sweeper's next pass.
pub(super) async fn expire_lapsed(
    store: &impl Commit,
    event_id: &EventId,
    buyer: &BuyerId,
    ceiling: Option<u32>,
    now: Timestamp,
) -> Result<bool, BackendError> {
    let count = store.buyer_count(event_id, buyer, now).await?;
    for job_id in &count.lapsed {
        settle_write(store, *job_id, JobAction::Expire, &Tender::Nothing).await?;
    }
    let has_room = ceiling.is_none_or(|ceiling| count.seats.is_none_or(|n| n <= ceiling));
    Ok(has_room || !count.lapsed.is_empty())
}

fn decided(decided: Decided) -> Attempt {
    Attempt::Decided(Box::new(decided))
}
