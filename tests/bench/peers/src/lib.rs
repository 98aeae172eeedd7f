//! Benchmark peers of seatclaim: the subset of its v1 HTTP contract that `seatclaim-loadgen`
//! uses, with every reservation decided synchronously inside its POST by a database (Redis in
//! `peer-redis`, PostgreSQL in `peer-postgres`). This file holds what both share: the request and
//! job shapes, their validation, and the [`Store`] each database implements; `http` the routes.

pub mod http;

use std::collections::HashSet;
use std::future::Future;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Most seats one request may name or ask for.
pub const MAX_SEATS: usize = 3;
/// Most seats one event may have.
pub const MAX_EVENT_SEATS: u64 = 100_000;
/// The reason given when an exact seat was taken first (seatclaim's wording).
pub const REASON_UNAVAILABLE: &str = "seat no longer available";

/// One section of a new event: `rows` rows of `seats_per_row` seats.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// The section's name, the first part of its seat ids.
    pub section: String,
    /// How many rows, numbered from 1.
    pub rows: u32,
    /// How many seats in each row, numbered from 1.
    pub seats_per_row: u32,
}

/// The body of `POST /v1/events`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEvent {
    /// The event's id.
    pub event_id: String,
    /// Its display name.
    #[serde(default)]
    pub name: String,
    /// How long a hold lasts.
    #[serde(default = "default_hold")]
    pub hold_seconds: u32,
    /// Its sections.
    pub sections: Vec<SectionSpec>,
    /// The per-buyer limit the load generator's events name: 0 (none), the only one the peers
    /// implement, as seatclaim's events under load have none.
    #[serde(default)]
    pub max_seats_per_buyer: u32,
}

fn default_hold() -> u32 {
    600
}

impl NewEvent {
    /// Checks the ids and sizes; returns the number of seats.
    pub fn validate(&self) -> Result<u64, String> {
        if !is_name(&self.event_id, 64, true) {
            return Err("event_id must be 1-64 of A-Z a-z 0-9 _ -".into());
        }
        if self.max_seats_per_buyer != 0 {
            return Err("the peers implement no per-buyer limit: max_seats_per_buyer must be 0".into());
        }
        if self.sections.is_empty() || self.hold_seconds == 0 {
            return Err("an event needs sections and a positive hold_seconds".into());
        }
        let mut names = HashSet::new();
        let mut seats = 0_u64;
        for s in &self.sections {
            if !is_name(&s.section, 32, false) || !names.insert(s.section.as_str()) {
                return Err(format!("bad or repeated section name {:?}", s.section));
            }
            seats += u64::from(s.rows) * u64::from(s.seats_per_row);
        }
        if seats == 0 || seats > MAX_EVENT_SEATS {
            return Err(format!("an event has 1 to {MAX_EVENT_SEATS} seats"));
        }
        Ok(seats)
    }

    /// Every seat as (seat id, section), section by section, row by row.
    pub fn seats(&self) -> impl Iterator<Item = (String, &str)> + '_ {
        self.sections.iter().flat_map(|s| {
            (1..=s.rows).flat_map(move |row| {
                (1..=s.seats_per_row)
                    .map(move |n| (format!("{}-{row}-{n}", s.section), &*s.section))
            })
        })
    }
}

/// Section names have no `-` (a seat id's parts are split on it); event ids may.
fn is_name(text: &str, max: usize, dash: bool) -> bool {
    (1..=max).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || (dash && b == b'-'))
}

/// The body of `POST /v1/events/{event_id}/reservations`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReserveBody {
    /// The buyer.
    pub buyer_id: Option<String>,
    /// Exact seats, all or none.
    pub seat_ids: Option<Vec<String>>,
    /// Or any free seats of this section...
    pub section: Option<String>,
    /// ...this many of them.
    pub quantity: Option<u8>,
}

/// What a reservation asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatRequest {
    /// These seats, all or none.
    Seats(Vec<String>),
    /// Any `quantity` free seats of `section`, all or none.
    Section {
        /// The section.
        section: String,
        /// How many seats.
        quantity: u8,
    },
}

/// A validated reservation, ready for a store to decide.
#[derive(Debug, Clone)]
pub struct Reservation {
    /// The event.
    pub event_id: String,
    /// The Idempotency-Key.
    pub key: String,
    /// The id the job gets if this is the key's first use.
    pub job_id: Uuid,
    /// The buyer.
    pub buyer_id: String,
    /// What is asked for.
    pub request: SeatRequest,
    /// Event, buyer and request in one string: a reused key must bring the same one.
    pub fingerprint: String,
}

impl Reservation {
    /// Validates a body for `event_id` under `key`.
    pub fn new(event_id: String, key: String, body: ReserveBody) -> Result<Self, String> {
        let buyer_id = body.buyer_id.unwrap_or_default();
        if buyer_id.is_empty() || buyer_id.len() > 128 || buyer_id.contains(char::is_control) {
            return Err("buyer_id must be 1-128 printable characters".into());
        }
        let request = match (body.seat_ids, body.section, body.quantity) {
            (Some(ids), None, None) => {
                let distinct: HashSet<&String> = ids.iter().collect();
                if ids.is_empty() || ids.len() > MAX_SEATS || distinct.len() != ids.len() {
                    return Err(format!("seat_ids lists 1 to {MAX_SEATS} distinct seats"));
                }
                SeatRequest::Seats(ids)
            }
            (None, Some(section), Some(quantity)) => {
                if !(1..=MAX_SEATS).contains(&usize::from(quantity)) {
                    return Err(format!("quantity is 1 to {MAX_SEATS}"));
                }
                SeatRequest::Section { section, quantity }
            }
            _ => return Err("give either seat_ids, or section and quantity".into()),
        };
        let fingerprint = match &request {
            SeatRequest::Seats(ids) => format!("{event_id}|{buyer_id}|seats|{}", ids.join(",")),
            SeatRequest::Section { section, quantity } => {
                format!("{event_id}|{buyer_id}|section|{section}|{quantity}")
            }
        };
        Ok(Self {
            event_id,
            key,
            job_id: Uuid::now_v7(),
            buyer_id,
            request,
            fingerprint,
        })
    }
}

/// A job as stored and shown.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    /// The job's id.
    pub job_id: Uuid,
    /// The event.
    pub event_id: String,
    /// The buyer.
    pub buyer_id: String,
    /// HELD, REJECTED, SOLD, CANCELLED, or EXPIRED (a HELD job past its deadline).
    pub status: String,
    /// The seats held or sold (kept after release).
    pub seat_ids: Vec<String>,
    /// A hold's deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_expires_at: Option<Timestamp>,
    /// Why it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Job {
    /// The job as seen at `now`: a HELD job whose deadline has passed reads EXPIRED, and only
    /// a HELD job shows its deadline.
    #[must_use]
    pub fn as_of(mut self, now: Timestamp) -> Self {
        if self.status == "HELD" && self.hold_expires_at.is_none_or(|until| until <= now) {
            self.status = "EXPIRED".into();
        }
        if self.status != "HELD" {
            self.hold_expires_at = None;
        }
        self
    }
}

/// One seat of the seat map.
#[derive(Debug, Clone, Serialize)]
pub struct SeatView {
    /// The seat's id.
    pub seat_id: String,
    /// Its section.
    pub section: String,
    /// AVAILABLE, HELD or SOLD (a lapsed hold shows AVAILABLE).
    pub state: String,
}

/// How a store answered a reservation.
#[derive(Debug)]
pub enum Reserved {
    /// The job, decided now or by the key's first use.
    Job(Job),
    /// No such event.
    UnknownEvent,
    /// The key was used before for another request.
    KeyReused,
    /// The request names seats, or a section, that the event lacks.
    Unknown(String),
}

/// Confirm or cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// HELD (live) -> SOLD.
    Confirm,
    /// HELD (live) -> CANCELLED, seats released.
    Cancel,
}

/// How a store answered a confirm or cancel.
#[derive(Debug)]
pub enum Settled {
    /// Done now, or already done before: the job as it now stands.
    Done(Job),
    /// Not possible from where the job stands.
    Conflict(Job),
    /// No such job.
    NotFound,
}

/// A database deciding reservations; every call is one atomic step.
pub trait Store: Send + Sync + 'static {
    /// Creates the event and its seats; false if it exists.
    fn create_event(&self, event: &NewEvent) -> impl Future<Output = anyhow::Result<bool>> + Send;
    /// The event's seats as of now, in a stable order; `None` for an unknown event.
    fn seat_map(
        &self,
        event_id: &str,
    ) -> impl Future<Output = anyhow::Result<Option<Vec<SeatView>>>> + Send;
    /// Decides a reservation (or finds the key's first decision).
    fn reserve(&self, r: &Reservation) -> impl Future<Output = anyhow::Result<Reserved>> + Send;
    /// A job as stored (the caller applies [`Job::as_of`]).
    fn job(&self, job_id: Uuid) -> impl Future<Output = anyhow::Result<Option<Job>>> + Send;
    /// Confirms or cancels a job.
    fn settle(
        &self,
        job_id: Uuid,
        action: Action,
    ) -> impl Future<Output = anyhow::Result<Settled>> + Send;
}
