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
use seatclaim_core::domain::{BuyerId, EventId, Job, JobAction, JobId, Settlement, Tender};
use seatclaim_core::ports::BackendError;

const SEATS: &str = "seats";
const HOLD_PREFIX: &str = "hold_";
const WAIT_PREFIX: &str = "wait_";

/// The count item of `buyer` in `event_id`. Seat ids cannot contain `#`, so no seat shares it.
fn count_key(event_id: &EventId, buyer: &BuyerId) -> Item {
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

fn wait_count(job: &Job) -> i64 {
    i64::try_from(job.request.quantity()).unwrap_or(i64::MAX)
}

fn seat_count(job: &Job) -> i64 {
    i64::try_from(job.seat_ids.len()).unwrap_or(i64::MAX)
}

impl DynamoStore {
    /// The count's part of a hold: `job`'s seats are added while the buyer counts at most
    /// `ceiling` seats, and its deadline is remembered for an expiry on the buyer's behalf.
    pub(crate) fn count_hold(
        &self,
        job: &Job,
        until: Timestamp,
        ceiling: u32,
    ) -> Result<TransactWriteItem, BackendError> {
        let hold = hold_attribute(job.job_id);
        update(
            &self.names.seats_table,
            count_key(&job.event_id, &job.buyer_id),
            "SET #hold = :until ADD #seats :seats",
            Some("attribute_not_exists(#seats) OR #seats <= :ceiling"),
            &[("#hold", &hold), ("#seats", SEATS)],
            vec![
                (":until", n(until.as_millisecond())),
                (":seats", n(seat_count(job))),
                (":ceiling", n(i64::from(ceiling))),
            ],
        )
    }

    /// The count's part of a join of the line: `job`'s quantity is added while the buyer
    /// counts at most `ceiling` seats, and remembered, to be given back if the wait ends
    /// without seats.
    pub(crate) fn count_wait(
        &self,
        job: &Job,
        ceiling: u32,
    ) -> Result<TransactWriteItem, BackendError> {
        let wait = wait_attribute(job.job_id);
        update(
            &self.names.seats_table,
            count_key(&job.event_id, &job.buyer_id),
            "SET #wait = :seats ADD #seats :seats",
            Some("attribute_not_exists(#seats) OR #seats <= :ceiling"),
            &[("#wait", &wait), ("#seats", SEATS)],
            vec![
                (":seats", n(wait_count(job))),
                (":ceiling", n(i64::from(ceiling))),
            ],
        )
    }

    /// The count's part of a hold from the line: the wait, already counted, becomes a hold
    /// until `until` without adding. Conditioned on the wait being remembered: a job that
    /// joined before waits counted fails it, and is counted as a claim instead (`count_hold`).
    pub(crate) fn count_served(
        &self,
        job: &Job,
        until: Timestamp,
    ) -> Result<TransactWriteItem, BackendError> {
        let (hold, wait) = (hold_attribute(job.job_id), wait_attribute(job.job_id));
        update(
            &self.names.seats_table,
            count_key(&job.event_id, &job.buyer_id),
            "SET #hold = :until REMOVE #wait",
            Some("attribute_exists(#wait)"),
            &[("#hold", &hold), ("#wait", &wait)],
            vec![(":until", n(until.as_millisecond()))],
        )
    }

    /// The count's part of a wait that ends without seats (a cancel, a close, a rejection for
    /// the limit): the remembered quantity is given back. Unconditional, like a settlement's; a
    /// job that joined before waits counted gives back nothing.
    pub(crate) fn count_unwait(&self, job: &Job) -> Result<TransactWriteItem, BackendError> {
        let wait = wait_attribute(job.job_id);
        update(
            &self.names.seats_table,
            count_key(&job.event_id, &job.buyer_id),
            "SET #seats = if_not_exists(#seats, :zero) - if_not_exists(#wait, :zero) REMOVE #wait",
            None,
            &[("#wait", &wait), ("#seats", SEATS)],
            vec![(":zero", n(0))],
        )
    }

    /// The count's part of settling `job`: a sale keeps its seats counted, a release gives them
    /// back, an extension moves the remembered deadline. Unconditional: the settlement's
    /// condition on the job already makes it happen once.
    pub(crate) fn count_settle(
        &self,
        job: &Job,
        settlement: Settlement,
    ) -> Result<TransactWriteItem, BackendError> {
        let hold = hold_attribute(job.job_id);
        let (expression, names, values) = match settlement {
            Settlement::Sell => ("REMOVE #hold", vec![("#hold", hold.as_str())], vec![]),
            Settlement::Release => (
                "REMOVE #hold ADD #seats :minus",
                vec![("#hold", hold.as_str()), ("#seats", SEATS)],
                vec![(":minus", n(-seat_count(job)))],
            ),
            Settlement::Extend { until, .. } => (
                "SET #hold = :until",
                vec![("#hold", hold.as_str())],
                vec![(":until", n(until.as_millisecond()))],
            ),
        };
        update(
            &self.names.seats_table,
            count_key(&job.event_id, &job.buyer_id),
            expression,
            None,
            &names,
            values,
        )
    }

    /// Expires `buyer`'s holds in `event_id` that lapsed by `now`, so that they stop counting,
    /// and says whether the count may now leave room for a claim under `ceiling` (none: no
    /// limit): it does if a hold was expired here, or if the count already has room (the
    /// sweeper expired a hold since the refused claim). Each expiry is the sweeper's settlement,
    /// so a race with it changes nothing.
    pub(crate) async fn expire_lapsed_of(
        &self,
        event_id: &EventId,
        buyer: &BuyerId,
        ceiling: Option<u32>,
        now: Timestamp,
    ) -> Result<bool, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.seats_table)
            .set_key(Some(count_key(event_id, buyer)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem seat count", e))?;
        let Some(item) = output.item() else {
            return Ok(true);
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
        // Not served to a waitlist here (a claim or a serving is under way): the sweeper's
        // pass serves the seats.
        for job_id in &lapsed {
            self.settle_write(*job_id, JobAction::Expire, &Tender::Nothing)
                .await?;
        }
        let seats = opt_n(item, SEATS)?;
        let has_room = ceiling.is_none_or(|ceiling| seats.is_none_or(|n| n <= i64::from(ceiling)));
        Ok(has_room || !lapsed.is_empty())
    }
}
