//! Handing seats given back to their section's line, inside the step of whatever gave them back
//! (a cancel, an expiry, the sweeper), so nothing can take them in between.

use std::collections::{BTreeSet, HashMap};

use jiff::Timestamp;

use super::StepStore;
use crate::domain::{EventId, Job, SaleTerms, Section, hand_out};
use crate::ports::BackendError;

/// Jobs of a line read per round of a hand-out: a round serves whoever of them the free seats
/// fit, and the next round reads on while seats are left, so a long line is read no further
/// than seats remain to hand out.
const LINE_PAGE: usize = 64;

/// Serves the lines `settled` may have moved (the sections of the seats it gave back, or its own
/// place in line) with their sections' claimable seats; returns the jobs that left a line.
pub fn serve_after(
    store: &mut impl StepStore,
    settled: &Job,
    now: Timestamp,
) -> Result<Vec<Job>, BackendError> {
    let event_id = &settled.event_id;
    let Some(terms) = store.terms(event_id)?.filter(|t| t.waitlist.is_open()) else {
        return Ok(Vec::new());
    };
    let mut sections: BTreeSet<Section> = settled.request.section().cloned().into_iter().collect();
    sections.extend(store.sections_of(event_id, &settled.seat_ids)?);
    let mut served = Vec::new();
    for section in &sections {
        served.extend(serve_line(store, &terms, event_id, section, now)?);
    }
    Ok(served)
}

/// Serves the lines of every section a channel has released by `now`: the release hands the
/// channel's seats to the line first, in its order (a claim of the section arriving before this
/// pass serves the line itself first, `claim.rs`). The sweeper's pass; returns the jobs that
/// left a line.
pub fn serve_released(
    store: &mut impl StepStore,
    now: Timestamp,
) -> Result<Vec<Job>, BackendError> {
    let mut served = Vec::new();
    for event_id in store.channel_events()? {
        let Some(terms) = store.terms(&event_id)?.filter(|t| t.waitlist.is_open()) else {
            continue;
        };
        for section in terms.channels.released_sections(now) {
            if store.has_line(&event_id, section)? {
                served.extend(serve_line(store, &terms, &event_id, section, now)?);
            }
        }
    }
    Ok(served)
}

/// Serves one line, a page at a time, first fit, until no seat is left or the line ends.
pub(super) fn serve_line(
    store: &mut impl StepStore,
    terms: &SaleTerms,
    event_id: &EventId,
    section: &Section,
    now: Timestamp,
) -> Result<Vec<Job>, BackendError> {
    let mut served = Vec::new();
    if !terms.serves_line(section, now) {
        return Ok(served);
    }
    let mut after = None;
    loop {
        let free = store.claimable(event_id, section, now)?;
        if free.is_empty() {
            return Ok(served);
        }
        let line = store.line_page(event_id, section, after, LINE_PAGE)?;
        let Some(last) = line.last() else {
            return Ok(served);
        };
        after = Some(last.job_id);
        let mut counts = HashMap::new();
        for job in &line {
            if terms.limit.is_some() && !counts.contains_key(&job.buyer_id) {
                let counted = store.counted_seats(event_id, &job.buyer_id, now)?;
                counts.insert(job.buyer_id.clone(), counted);
            }
        }
        let steps = hand_out(&line, &free, terms, now, |buyer| {
            counts.get(buyer).copied().unwrap_or(0)
        });
        for step in steps {
            let job = &step.transition.job;
            let until = job.hold_expires_at.unwrap_or(now);
            if !step.seats.is_empty() && !store.hold_seats(job, &step.seats, now, until)? {
                return Err(BackendError::permanent(format!(
                    "the line's seats for job {} changed inside their step",
                    job.job_id
                )));
            }
            store.save_transition(&step.transition)?;
            served.push(step.transition.job);
        }
        if line.len() < LINE_PAGE {
            return Ok(served);
        }
    }
}
