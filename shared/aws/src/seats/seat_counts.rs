//! The per-buyer seat limit on DynamoDB. A limited event keeps one count item per buyer in the
//! seats table (key `event#buyer#<buyer>`): `seats`, the seats of the buyer's HELD and SOLD jobs
//! there and the quantities of their WAITLISTED ones, one `hold_<job>` attribute per HELD job
//! naming its deadline, and one `wait_<job>` per WAITLISTED job naming its quantity. A hold's
//! transaction, and a join of the line's, adds to the count on condition that it is still at
//! most the limit's ceiling (the domain's `SeatLimit::ceiling_for`), so racing claims cannot
//! both pass; a hold from the line turns the wait into a hold without adding; a confirm forgets
//! the deadline, an extension moves it, and a cancel or an expiry (or a wait's cancel, close or
//! rejection) gives the seats back, in the settlement's own transaction.
//!
//! A lapsed hold still counts until it is expired. A claim refused by the count expires the
//! buyer's lapsed holds first (the sweeper's own settlement) and tries again, so a buyer whose
//! hold lapsed is never refused for it, even when the sweeper expired it in between.

use aws_sdk_dynamodb::types::TransactWriteItem;
use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, n, opt_n, s, update};
use seatclaim_core::domain::{BuyerId, EventId, Job, JobId};
use seatclaim_core::ports::BackendError;
use seatclaim_core::step::BuyerCount;
use seatclaim_core::step::CountChange;

const SEATS: &str = "seats";
const HOLD_PREFIX: &str = "hold_";
const WAIT_PREFIX: &str = "wait_";
/// A code's count also counts the seats sold under it, for its standing.
pub(crate) const SOLD: &str = "sold";

/// The count item of `buyer` in `event_id`. Seat ids cannot contain `#`, so no seat shares it.
pub(crate) fn count_key(event_id: &EventId, buyer: &BuyerId) -> Item {
    Item::from([(
        "seat_key".to_owned(),
        s(format!("{event_id}#buyer#{buyer}")),
    )])
}

fn hold_attribute(job_id: JobId) -> String {
    format!("{HOLD_PREFIX}{job_id}")
}

fn wait_attribute(job_id: JobId) -> String {
    format!("{WAIT_PREFIX}{job_id}")
}

impl DynamoStore {
    /// The count's part of a plan (`CountChange`): a hold or a join adds its seats on
    /// condition that the buyer counts at most the ceiling, remembering a hold's deadline (for
    /// an expiry on the buyer's behalf) or a wait's quantity (to give back if the wait ends
    /// without seats); a hold from the line turns the remembered wait into a hold without
    /// adding, on condition that the wait is remembered (a job that joined before waits
    /// counted fails it, and is counted as a hold instead). A sale forgets the deadline, a
    /// release gives the seats back, an extension moves the deadline, and a wait's end gives
    /// its quantity back, unconditionally: the plan's condition on the job already makes each
    /// happen once.
    ///
    /// `key` names the count: the buyer's ([`count_key`]) or the job's access code's
    /// (`events/codes.rs`), which also counts the seats sold.
    ///
    /// `code`: the count is an access code's (`Some`), whose holds and waits are also
    /// conditioned on the code not being revoked; `Some(true)`: the hold also binds the code to
    /// the job's buyer, on condition that nobody else is bound (one item takes one operation in
    /// a transaction, so the binding rides here).
    pub(crate) fn count_write(
        &self,
        key: Item,
        job: &Job,
        change: CountChange,
        code: Option<bool>,
    ) -> Result<TransactWriteItem, BackendError> {
        let (hold, wait) = (hold_attribute(job.job_id), wait_attribute(job.job_id));
        let under = if code.is_some() {
            Some(
                "(attribute_not_exists(#seats) OR #seats <= :ceiling) AND (attribute_not_exists(revoked) OR revoked = :zero)",
            )
        } else {
            Some("attribute_not_exists(#seats) OR #seats <= :ceiling")
        };
        let (expression, condition, names, values) = match change {
            CountChange::Hold {
                seats,
                until,
                ceiling,
            } => (
                "SET #hold = :until ADD #seats :seats",
                under,
                vec![("#hold", hold.as_str()), ("#seats", SEATS)],
                vec![
                    (":until", n(until.as_millisecond())),
                    (":seats", n(i64::from(seats))),
                    (":ceiling", n(i64::from(ceiling))),
                ],
            ),
            CountChange::Wait { seats, ceiling } => (
                "SET #wait = :seats ADD #seats :seats",
                under,
                vec![("#wait", wait.as_str()), ("#seats", SEATS)],
                vec![
                    (":seats", n(i64::from(seats))),
                    (":ceiling", n(i64::from(ceiling))),
                ],
            ),
            CountChange::Served { until } => (
                "SET #hold = :until REMOVE #wait",
                Some("attribute_exists(#wait)"),
                vec![("#hold", hold.as_str()), ("#wait", wait.as_str())],
                vec![(":until", n(until.as_millisecond()))],
            ),
            CountChange::Unwait => (
                "SET #seats = if_not_exists(#seats, :zero) - if_not_exists(#wait, :zero) REMOVE #wait",
                None,
                vec![("#wait", wait.as_str()), ("#seats", SEATS)],
                vec![(":zero", n(0))],
            ),
            CountChange::Sold { seats } => (
                "REMOVE #hold ADD #sold :sold",
                None,
                vec![("#hold", hold.as_str()), ("#sold", SOLD)],
                vec![(":sold", n(i64::from(seats)))],
            ),
            CountChange::Released { seats } => (
                "REMOVE #hold ADD #seats :minus",
                None,
                vec![("#hold", hold.as_str()), ("#seats", SEATS)],
                vec![(":minus", n(-i64::from(seats)))],
            ),
            CountChange::Extended { until } => (
                "SET #hold = :until",
                None,
                vec![("#hold", hold.as_str())],
                vec![(":until", n(until.as_millisecond()))],
            ),
        };
        let (mut expression, mut condition) = (expression.to_owned(), condition.map(str::to_owned));
        let mut values = values;
        if code.is_some() && matches!(change, CountChange::Hold { .. } | CountChange::Wait { .. }) {
            values.push((":zero", n(0)));
        }
        if code == Some(true) {
            expression = expression.replacen("SET ", "SET bound_to = :buyer, ", 1);
            let bound = "(attribute_not_exists(bound_to) OR bound_to = :buyer)";
            condition =
                Some(condition.map_or_else(|| bound.to_owned(), |c| format!("({c}) AND {bound}")));
            values.push((":buyer", s(job.buyer_id.as_str())));
        }
        update(
            &self.names.seats_table,
            key,
            &expression,
            condition.as_deref(),
            &names,
            values,
        )
    }

    /// A count item (`key`), read strongly: the item, `None` if there is none yet.
    pub(crate) async fn count_item(&self, key: Item) -> Result<Option<Item>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.seats_table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem seat count", e))?;
        Ok(output.item().cloned())
    }
}

/// What a count item says at `now`: its seats, and the holds it still counts that lapsed.
pub(crate) fn count_of(item: Option<&Item>, now: Timestamp) -> Result<BuyerCount, BackendError> {
    let Some(item) = item else {
        return Ok(BuyerCount::default());
    };
    let mut lapsed = Vec::new();
    for name in item.keys() {
        let Some(job_id) = name.strip_prefix(HOLD_PREFIX).and_then(JobId::parse) else {
            continue;
        };
        if opt_n(item, name)?.is_some_and(|until| until <= now.as_millisecond()) {
            lapsed.push(job_id);
        }
    }
    let seats = opt_n(item, SEATS)?.map(|n| u32::try_from(n.max(0)).unwrap_or(u32::MAX));
    Ok(BuyerCount { seats, lapsed })
}
