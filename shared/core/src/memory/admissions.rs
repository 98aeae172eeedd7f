use async_trait::async_trait;

use super::MemoryStore;
use super::state::{KeyRecord, State};
use crate::codec::encode_intent;
use crate::domain::{BuyerId, IdempotencyKey, Intent, Job, JobId, SeatId, SeatRequest, capacities};
use crate::ports::{Admission, Admissions, BackendError, SectionKnown};

#[async_trait]
impl Admissions for MemoryStore {
    /// The key's record, the PENDING job and the queued intent, written under one lock: an
    /// earlier record of the key decides (a retry or a reused key), else the request is checked
    /// against the event and all three are stored.
    async fn admit(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        let body = encode_intent(intent)?;
        let now = self.clock.now();
        let mut state = self.lock();
        let record = (intent.buyer_id.clone(), key.as_str().to_owned());
        if let Some(earlier) = state.keys.get(&record) {
            return Ok(
                match Admission::for_earlier(&earlier.fingerprint, intent, earlier.job_id) {
                    Admission::Duplicate(job_id) if state.is_prequeued(job_id) => {
                        Admission::Prequeued(job_id)
                    }
                    earlier => earlier,
                },
            );
        }
        if let Some(refusal) = check_request(&state, intent) {
            return Ok(refusal);
        }
        if state.jobs.contains_key(&intent.job_id) {
            return Err(BackendError::permanent(format!(
                "job {} exists already",
                intent.job_id
            )));
        }
        let start = (state.events.get(&intent.event_id)).and_then(|e| e.terms().start_for(intent));
        if let Some(start) = start.filter(|s| state.waits_for_opening(&intent.event_id, s, now)) {
            // It waits for the opening: its age counts from then.
            let waiting = Intent {
                opens_at: Some(start.at),
                ..intent.clone()
            };
            if let Some(queued) = state.park(intent, start, encode_intent(&waiting)?) {
                return Ok(Admission::AlreadyQueued(queued));
            }
            state.keys.insert(record, key_record(intent));
            state.put_job(Job::pending(intent));
            return Ok(Admission::Prequeued(intent.job_id));
        }
        state.keys.insert(record, key_record(intent));
        state.put_job(Job::pending(intent));
        state.queue.push(body, Some(intent.job_id), now);
        Ok(Admission::Accepted(intent.job_id))
    }

    /// Ids count up, like the embedded store's time-ordered ones, and repeat run after run.
    fn new_job_id(&self, _buyer: &BuyerId, _key: &IdempotencyKey) -> JobId {
        self.next_job_id()
    }
}

/// The idempotency record of a new job's key.
fn key_record(intent: &Intent) -> KeyRecord {
    KeyRecord {
        fingerprint: intent.request.fingerprint(&intent.event_id),
        job_id: intent.job_id,
    }
}

/// Refuses a request for an event, seats or section that do not exist, or that its section
/// can never serve.
fn check_request(state: &State, intent: &Intent) -> Option<Admission> {
    let Some(event) = state.events.get(&intent.event_id) else {
        return Some(Admission::UnknownEvent);
    };
    let (found, section): (Vec<SeatId>, SectionKnown) = match &intent.request {
        SeatRequest::Seats(wanted) => (
            wanted
                .iter()
                .filter(|seat| event.position.contains_key(*seat))
                .cloned()
                .collect(),
            SectionKnown::No,
        ),
        SeatRequest::Section { section, .. } => {
            let of_section = event.seats.iter().filter(|seat| &seat.section == section);
            let capacity = capacities(of_section.map(|seat| (&seat.section, seat.place)));
            let known = capacity.get(section).copied();
            let known = known.map_or(SectionKnown::No, |c| SectionKnown::Yes(Some(c)));
            (Vec::new(), known)
        }
    };
    Admission::refusal(&intent.request, &found, section)
}
