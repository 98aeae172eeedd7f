//! What admissions check of an event, read from the file once: its terms and the names of its
//! seats and sections. An event never changes once created (nothing deletes its row or its
//! seats, and a restore happens with the service stopped), so what was read stays true; an
//! admission then checks its request without a read per seat. The one exception is its
//! waitlist, which an operator may close from any process: [`Shape::terms_in`] reads that part
//! afresh in the admission's own transaction. Only committed events are
//! remembered: one being created in this process is read afresh until its round commits (a
//! failed round would otherwise leave a remembered event that does not exist).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Transaction;

use super::catalog::{SEAT_COLUMNS, read_seat};
use super::terms::terms;
use crate::error::sqlite_error;
use seatclaim_core::codec::decode_waitlist;
use seatclaim_core::domain::{EventId, SaleTerms, Section, SectionCapacity, Waitlist, capacities};
use seatclaim_core::ports::BackendError;
use seatclaim_core::ports::SectionKnown;

/// The most events remembered at once; past it the memory starts over, so a process that
/// serves many events in turn keeps only the recent ones.
const REMEMBERED: usize = 64;

/// An event's terms and the names of its seats and sections.
pub(super) struct Shape {
    /// The hold length, the per-buyer limit and the rest of the terms, as created.
    terms: SaleTerms,
    seats: HashSet<String>,
    sections: HashMap<Section, SectionCapacity>,
}

impl Shape {
    /// The event's terms as of `tx`: the remembered ones, with the waitlist's state read in
    /// `tx` where the event has one, so an admission that decides never joins a closed line.
    pub(super) fn terms_in(
        &self,
        tx: &Transaction<'_>,
        event_id: &EventId,
    ) -> Result<SaleTerms, BackendError> {
        let mut terms = self.terms.clone();
        if terms.waitlist != Waitlist::None {
            let stored: String = tx
                .prepare_cached("SELECT waitlist FROM events WHERE event_id = ?1")
                .map_err(sqlite_error)?
                .query_row([event_id.as_str()], |row| row.get(0))
                .map_err(sqlite_error)?;
            terms.waitlist = decode_waitlist(event_id.as_str(), &stored)?;
        }
        Ok(terms)
    }

    /// Whether the event has this seat.
    pub(super) fn has_seat(&self, seat: &str) -> bool {
        self.seats.contains(seat)
    }

    /// Whether the event has this section, and what it can serve.
    pub(super) fn section(&self, section: &Section) -> SectionKnown {
        self.sections
            .get(section)
            .map_or(SectionKnown::No, |capacity| {
                SectionKnown::Yes(Some(*capacity))
            })
    }
}

/// The shapes of the events admissions have asked about.
#[derive(Default)]
pub(super) struct EventShapes(Mutex<Known>);

#[derive(Default)]
struct Known {
    shapes: HashMap<EventId, Arc<Shape>>,
    /// Events whose creation this process has queued but not yet seen committed.
    creating: HashSet<EventId>,
}

impl EventShapes {
    /// The shape of `event_id`, read in `tx` the first time; `None` if there is no such event
    /// (not remembered: it may be created later).
    pub(super) fn get(
        &self,
        tx: &Transaction<'_>,
        event_id: &EventId,
    ) -> Result<Option<Arc<Shape>>, BackendError> {
        if let Some(known) = self.lock().shapes.get(event_id) {
            return Ok(Some(Arc::clone(known)));
        }
        let Some(terms) = terms(tx, event_id)? else {
            return Ok(None);
        };
        let mut query = tx
            .prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM seats WHERE event_id = ?1"
            ))
            .map_err(sqlite_error)?;
        let mut rows = query.query([event_id.as_str()]).map_err(sqlite_error)?;
        let mut read = Vec::new();
        while let Some(row) = rows.next().map_err(sqlite_error)? {
            read.push(read_seat(row).map_err(sqlite_error)?.into_seat()?);
        }
        let sections = capacities(read.iter().map(|seat| (&seat.section, seat.place)));
        let seats = read
            .into_iter()
            .map(|seat| seat.seat_id.to_string())
            .collect();
        let shape = Arc::new(Shape {
            terms,
            seats,
            sections,
        });
        let mut known = self.lock();
        if known.creating.contains(event_id) {
            return Ok(Some(shape));
        }
        if known.shapes.len() >= REMEMBERED {
            known.shapes.clear();
        }
        known.shapes.insert(event_id.clone(), Arc::clone(&shape));
        Ok(Some(shape))
    }

    /// Runs `create`, the write that creates `event_id`, with the event not remembered until
    /// that write has returned (committed or failed).
    pub(super) async fn creating<T>(
        &self,
        event_id: &EventId,
        create: impl std::future::Future<Output = T>,
    ) -> T {
        self.lock().creating.insert(event_id.clone());
        let created = create.await;
        self.lock().creating.remove(event_id);
        created
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    const CREATE: &str = "INSERT INTO events (event_id, name, hold_ms, created_at) VALUES ('e1', 'E', 1000, 0);
         INSERT INTO seats (event_id, seat_id, section, position, state) VALUES ('e1', 'A-1', 'A', 0, 'AVAILABLE');";

    fn known(shapes: &EventShapes, conn: &mut Connection) -> Option<Arc<Shape>> {
        let tx = conn.transaction().expect("tx");
        shapes
            .get(&tx, &EventId::parse("e1").expect("id"))
            .expect("read")
    }

    #[tokio::test]
    async fn an_event_is_read_once_and_only_once_its_creation_has_returned() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).expect("open");
        super::super::migrations::migrate(&mut conn).expect("migrate");
        let shapes = EventShapes::default();
        let e1 = EventId::parse("e1").expect("id");
        assert!(known(&shapes, &mut conn).is_none(), "no such event yet");
        // A creation whose round rolls back: its event is read inside it, but not remembered.
        shapes
            .creating(&e1, async {
                let tx = conn.transaction().expect("tx");
                tx.execute_batch(CREATE).expect("create");
                let shape = shapes
                    .get(&tx, &e1)
                    .expect("read")
                    .expect("seen inside its round");
                assert!(
                    shape.has_seat("A-1")
                        && shape.section(&Section::parse("A").unwrap()) != SectionKnown::No
                );
            })
            .await;
        assert!(
            known(&shapes, &mut conn).is_none(),
            "rolled back: not remembered"
        );
        conn.execute_batch(CREATE).expect("create and commit");
        let shape = known(&shapes, &mut conn).expect("created");
        assert!(
            !shape.has_seat("A-2")
                && shape.section(&Section::parse("B").unwrap()) == SectionKnown::No
        );
        // Read once: a change to the file (which nothing makes) is not read again.
        conn.execute_batch("DELETE FROM seats").expect("delete");
        assert!(
            known(&shapes, &mut conn)
                .expect("remembered")
                .has_seat("A-1")
        );
    }
}
