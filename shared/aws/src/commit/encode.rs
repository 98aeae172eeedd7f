//! A plan's writes as one `TransactWriteItems`: each write of the plan becomes the items that
//! spell it (a seat's conditional update or check, the job's update and its outbox event, the
//! line's place and flags, the buyer's count), and a cancelled transaction's reasons name the
//! plan's writes whose condition failed.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, TransactWriteItem};

use crate::DynamoStore;
use crate::dynamo::error::build_error;
use crate::dynamo::item::{Transacted, n, s, transact, update};
use crate::dynamo::keys::seat_key;
use crate::events::codes::code_key;
use crate::line::waitlist::section_of;
use crate::seats::seat_counts::count_key;
use seatclaim_core::codec::SeatRecord;
use seatclaim_core::domain::{Job, JobStatus, SeatId, Waitlist};
use seatclaim_core::ports::BackendError;
use seatclaim_core::step::{Committed, Plan, SeatChange, SeatCondition, Write};

/// The condition on a seat a claim may take: AVAILABLE, or HELD past its deadline.
const CLAIMABLE: &str = "#state = :available OR (#state = :held AND hold_until <= :now)";
/// The condition on a seat another claim of this process was writing beside a block: taken.
const TAKEN: &str = "NOT (#state = :available OR (#state = :held AND hold_until <= :now))";
/// The condition on a seat a settlement moves: held by the settled job.
const HELD_BY: &str = "#state = :held AND job_id = :job";
/// The same, with the deadline the settlement read (an extension: racing ones add up to no more).
const HELD_UNTIL: &str = "#state = :held AND job_id = :job AND hold_until = :from";

/// One write's items, and the event a rejection leaves to its caller.
type Encoded = (
    Vec<TransactWriteItem>,
    Option<seatclaim_core::domain::ReservationEvent>,
);

impl DynamoStore {
    /// Runs `plan` as one transaction, and reads which of its writes' conditions failed.
    pub(crate) async fn run_plan(&self, plan: &Plan) -> Result<Committed, BackendError> {
        let mut items = Vec::new();
        let mut owners = Vec::new();
        let mut unrecorded = None;
        // A join's place in line is one sort key for the job's record of it and the place.
        let place = match plan.writes.iter().any(|w| matches!(w, Write::Join { .. })) {
            true => Some(self.joining_place(&plan.job).await?),
            false => None,
        };
        for (index, write) in plan.writes.iter().enumerate() {
            let (encoded, event) = self.encode(plan, write, place.as_deref()).await?;
            owners.extend(std::iter::repeat_n(index, encoded.len()));
            items.extend(encoded);
            unrecorded = unrecorded.or(event);
        }
        let failed = match transact(&self.db, items).await? {
            Transacted::Committed => return Ok(Committed::Written(unrecorded)),
            Transacted::ConditionFailed(failed) => failed,
        };
        let mut writes: Vec<usize> = (owners.iter().zip(&failed))
            .filter(|(_, failed)| **failed)
            .map(|(owner, _)| *owner)
            .collect();
        writes.dedup();
        if writes
            .iter()
            .any(|w| plan.writes.get(*w) == Some(&Write::LineOpen))
        {
            // The line closed since this process read the event's terms: forget them.
            self.set_cached_waitlist(&plan.job.event_id, Waitlist::Closed)?;
        }
        Ok(Committed::Failed(writes))
    }

    /// The items of one write of `plan`.
    async fn encode(
        &self,
        plan: &Plan,
        write: &Write,
        place: Option<&str>,
    ) -> Result<Encoded, BackendError> {
        let job = &plan.job;
        let items = match write {
            Write::Seat {
                seat_id,
                change,
                condition,
            } => vec![self.seat_write(plan, seat_id, *change, *condition)?],
            // A claim's rejection is the job's update alone: its event is handed back.
            Write::Job(transition)
                if transition.from == JobStatus::Pending
                    && transition.job.status == JobStatus::Rejected =>
            {
                let items = vec![self.job_write(transition)?];
                return Ok((items, Some(transition.event.clone())));
            }
            Write::Job(transition) => {
                let mut items = match (transition.job.status, place) {
                    (JobStatus::Waitlisted, Some(place)) => self.joining(transition, place)?,
                    _ => self.transition(transition)?,
                };
                items.extend(self.payment_marker(transition)?);
                items
            }
            Write::Count(change) => {
                let key = count_key(&job.event_id, &job.buyer_id);
                vec![self.count_write(key, job, *change, None)?]
            }
            // A binding rides on the code's count, the one operation on the code's item.
            Write::CodeCount(change) => {
                let key = code_key(&job.event_id, code_of(job)?);
                let bind = plan.writes.contains(&Write::BindCode);
                vec![self.count_write(key, job, *change, Some(bind))?]
            }
            Write::BindCode if plan.writes.iter().any(|w| matches!(w, Write::CodeCount(_))) => {
                vec![]
            }
            Write::BindCode => vec![self.bind_write(job, code_of(job)?)?],
            Write::Join { forms } => {
                let section = section_of(job)?.as_str();
                let place = place.unwrap_or_default().to_owned();
                let mut items = vec![self.place_write(job, section, place)?];
                if *forms {
                    items.extend(self.flag_writes(&job.event_id, section)?);
                }
                items
            }
            Write::LineOpen => vec![self.open_check(job, section_of(job)?.as_str())?],
            Write::Leave => vec![self.leave_line(job).await?],
        };
        Ok((items, None))
    }

    /// A seat's write: its update (or, for a check, a condition check alone) under its
    /// condition, with only the values the two expressions name.
    fn seat_write(
        &self,
        plan: &Plan,
        seat: &SeatId,
        change: SeatChange,
        condition: SeatCondition,
    ) -> Result<TransactWriteItem, BackendError> {
        let job = &plan.job;
        let mut values: BTreeMap<&str, AttributeValue> = BTreeMap::new();
        let held = || s(SeatRecord::HELD);
        let condition = match condition {
            SeatCondition::Claimable | SeatCondition::Taken => {
                values.insert(":available", s(SeatRecord::AVAILABLE));
                values.insert(":held", held());
                values.insert(":now", n(plan.now.as_millisecond()));
                if condition == SeatCondition::Claimable {
                    CLAIMABLE
                } else {
                    TAKEN
                }
            }
            SeatCondition::HeldBy { until } => {
                values.insert(":held", held());
                values.insert(":job", s(job.job_id.to_string()));
                match until {
                    Some(from) => {
                        values.insert(":from", n(from.as_millisecond()));
                        HELD_UNTIL
                    }
                    None => HELD_BY,
                }
            }
        };
        let expression = match change {
            SeatChange::Check => return self.seat_check(job, seat, condition, values),
            SeatChange::Hold { until } => {
                values.insert(":held", held());
                values.insert(":job", s(job.job_id.to_string()));
                values.insert(":until", n(until.as_millisecond()));
                "SET #state = :held, job_id = :job, hold_until = :until REMOVE free_key"
            }
            SeatChange::Sell => {
                values.insert(":sold", s(SeatRecord::SOLD));
                "SET #state = :sold REMOVE hold_until"
            }
            // Back into the free-list shard the seat was created in.
            SeatChange::Release => {
                values.insert(":available", s(SeatRecord::AVAILABLE));
                "SET #state = :available, free_key = free_home REMOVE job_id, hold_until"
            }
            SeatChange::Extend { until } => {
                values.insert(":until", n(until.as_millisecond()));
                "SET hold_until = :until"
            }
        };
        update(
            &self.names.seats_table,
            seat_key(&job.event_id, seat),
            expression,
            Some(condition),
            &[("#state", "state")],
            values.into_iter().collect(),
        )
    }

    /// A check, in a plan's transaction, that a seat is as the decision judged it.
    fn seat_check(
        &self,
        job: &Job,
        seat: &SeatId,
        condition: &str,
        values: BTreeMap<&str, AttributeValue>,
    ) -> Result<TransactWriteItem, BackendError> {
        let check = ConditionCheck::builder()
            .table_name(&self.names.seats_table)
            .set_key(Some(seat_key(&job.event_id, seat)))
            .condition_expression(condition)
            .expression_attribute_names("#state", "state")
            .set_expression_attribute_values(Some(
                values.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            ))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }
}

/// The access code a plan's job was admitted with, which its code writes name.
fn code_of(job: &Job) -> Result<&seatclaim_core::domain::CodeHash, BackendError> {
    job.code()
        .ok_or_else(|| BackendError::permanent(format!("job {} has no access code", job.job_id)))
}
