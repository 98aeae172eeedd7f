//! The core's claim and settle algorithm ([`seatclaim_core::step`]) on SQLite: every read and
//! conditional write it asks for, inside the caller's write transaction.

use std::collections::HashMap;

use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::candidates::candidate_seats;
use super::codes;
use super::hold::hold_seats;
use super::job_rows::{load_job, save_transition};
use super::settle::settle_seats;
use super::terms::{counted_seats, terms};
use super::waitlist::{claimable, has_line, line_page};
use crate::error::sqlite_error;
use seatclaim_core::domain::{
    Best, BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, SaleTerms, Seat, SeatId,
    Section, Settlement, Transition,
};
use seatclaim_core::ports::BackendError;
use seatclaim_core::step::StepStore;

/// A write transaction, as the core's step sees it. It remembers each event's terms for the
/// rest of the transaction (a batch of claims reads them once per event), and every job whose
/// transition it saved, for the long polls once the transaction commits.
pub(super) struct SqlStep<'a, 'conn> {
    tx: &'a Transaction<'conn>,
    terms: HashMap<EventId, SaleTerms>,
    /// The jobs moved in this transaction, in the order they moved.
    pub(super) moved: Vec<Job>,
}

impl<'a, 'conn> SqlStep<'a, 'conn> {
    /// The step of `tx`.
    pub(super) fn new(tx: &'a Transaction<'conn>) -> Self {
        Self {
            tx,
            terms: HashMap::new(),
            moved: Vec::new(),
        }
    }

    /// The step of `tx`, knowing `event`'s terms already (read by an admission).
    pub(super) fn knowing(tx: &'a Transaction<'conn>, event: EventId, known: SaleTerms) -> Self {
        Self {
            tx,
            terms: HashMap::from([(event, known)]),
            moved: Vec::new(),
        }
    }
}

impl StepStore for SqlStep<'_, '_> {
    fn job(&mut self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        load_job(self.tx, job_id)
    }

    fn terms(&mut self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError> {
        if let Some(known) = self.terms.get(event_id) {
            return Ok(Some(known.clone()));
        }
        let read = terms(self.tx, event_id)?;
        if let Some(read) = &read {
            self.terms.insert(event_id.clone(), read.clone());
        }
        Ok(read)
    }

    fn counted_seats(
        &mut self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<u32, BackendError> {
        counted_seats(self.tx, event_id, buyer, now)
    }

    fn candidate_seats(
        &mut self,
        intent: &Intent,
        best: Best,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        candidate_seats(self.tx, intent, best, now)
    }

    fn code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
    ) -> Result<Option<CodeRecord>, BackendError> {
        codes::record(self.tx, event_id, hash)
    }

    fn code_used(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<u32, BackendError> {
        codes::used(self.tx, event_id, hash, now).map(|(used, _)| used)
    }

    fn bind_code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        buyer: &BuyerId,
    ) -> Result<(), BackendError> {
        codes::update(self.tx, event_id, hash, codes::Change::Bind(buyer)).map(drop)
    }

    fn channel_events(&mut self) -> Result<Vec<EventId>, BackendError> {
        let ids: Vec<String> = (self.tx)
            .prepare_cached("SELECT event_id FROM events WHERE channels IS NOT NULL")
            .map_err(sqlite_error)?
            .query_map([], |row| row.get(0))
            .map_err(sqlite_error)?
            .collect::<Result<_, _>>()
            .map_err(sqlite_error)?;
        Ok(ids
            .iter()
            .filter_map(|id| EventId::parse(id).ok())
            .collect())
    }

    fn has_line(&mut self, event_id: &EventId, section: &Section) -> Result<bool, BackendError> {
        has_line(self.tx, event_id, section)
    }

    fn hold_seats(
        &mut self,
        job: &Job,
        seat_ids: &[SeatId],
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, BackendError> {
        hold_seats(self.tx, job, seat_ids, now, until)
    }

    fn settle_seats(&mut self, job: &Job, settlement: Settlement) -> Result<usize, BackendError> {
        settle_seats(self.tx, job, settlement)
    }

    fn save_transition(&mut self, transition: &Transition) -> Result<(), BackendError> {
        save_transition(self.tx, transition)?;
        self.moved.push(transition.job.clone());
        Ok(())
    }

    fn sections_of(
        &mut self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Section>, BackendError> {
        let mut section_of = self
            .tx
            .prepare_cached("SELECT section FROM seats WHERE event_id = ?1 AND seat_id = ?2")
            .map_err(sqlite_error)?;
        let mut sections = Vec::with_capacity(seat_ids.len());
        for seat in seat_ids {
            let section: String = section_of
                .query_row(params![event_id.as_str(), seat.as_str()], |row| row.get(0))
                .map_err(sqlite_error)?;
            sections.push(
                Section::parse(&section).map_err(|e| BackendError::permanent(e.to_string()))?,
            );
        }
        Ok(sections)
    }

    fn line_page(
        &mut self,
        event_id: &EventId,
        section: &Section,
        after: Option<JobId>,
        size: usize,
    ) -> Result<Vec<Job>, BackendError> {
        line_page(self.tx, event_id, section, after, size)
    }

    fn claimable(
        &mut self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        claimable(self.tx, event_id, section, now)
    }
}
