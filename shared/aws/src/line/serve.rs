//! Serving a section's waitlist on DynamoDB: the line's head and the section's free seats are
//! read, the domain's `hand_out` decides who gets which (first fit in line order), and each step is its own transaction,
//! conditioned as any claim is (each seat AVAILABLE or lapsed, the job still WAITLISTED, the
//! buyer's count under its ceiling), that also deletes the job's place. Servers racing on one
//! line (a cancel and the sweeper) lose a condition and read again; nobody is served twice.

use futures_util::{StreamExt, TryStreamExt};

use crate::DynamoStore;
use crate::dynamo::item::{Transacted, transact};
use seatclaim_core::domain::{EventId, HandOut, Job, JobStatus, SaleTerms, Section, hand_out};
use seatclaim_core::ports::BackendError;

/// Jobs of a line read in a round at first: a round serves whoever of them the free seats fit.
const LINE_PAGE: usize = 16;
/// The deepest a round reads into the line: a round that served nobody while seats are left
/// reads four times deeper the next time, up to this (the sweeper's next pass goes on).
const DEEPEST: usize = 1024;
/// Rounds of one serving: each reads the line and the seats afresh after a lost race or a
/// fully served page. Past the last, the sweeper's next pass goes on.
const SERVE_ROUNDS: usize = 8;
/// Free seats a round reads (`free_seats` takes a quantity and reads pages of 16 times it).
const SEATS_PER_ROUND: u8 = 10;

/// How one step of a hand-out ended.
enum Step {
    /// Written.
    Done,
    /// A condition failed (a seat taken, the job served or cancelled meanwhile): read again.
    Raced,
    /// The buyer's count left no room for the job's seats.
    OverLimit,
    /// The count remembers no wait of the job: it joined before waits counted.
    Uncounted,
}

/// How a hold from the line writes the buyer's count.
#[derive(Clone, Copy)]
enum Count {
    /// The wait, already counted, becomes the hold.
    Waited,
    /// The seats are added under the ceiling, as a claim's are (a wait from before waits counted).
    Claimed,
}

impl DynamoStore {
    /// Hands the section's free seats to its line, first fit in line order, until no seat is
    /// left, the whole line was looked at, or the rounds run out.
    pub(crate) async fn serve_line(
        &self,
        event_id: &EventId,
        section: &Section,
        terms: &SaleTerms,
    ) -> Result<(), BackendError> {
        let mut depth = LINE_PAGE;
        for _ in 0..SERVE_ROUNDS {
            let free = self
                .free_seats(event_id, section.as_str(), SEATS_PER_ROUND)
                .await?;
            if free.is_empty() {
                return Ok(());
            }
            let line = self.waiting_jobs(event_id, section, depth).await?;
            let now = self.clock.now();
            let steps = hand_out(&line, &free, terms, now, |_| 0);
            let mut raced = false;
            for step in &steps {
                raced = match self.write_step(step, terms).await? {
                    Step::Done => false,
                    Step::Raced | Step::Uncounted => true,
                    Step::OverLimit => self.over_limit(&step.transition.job, terms).await?,
                };
                if raced {
                    break;
                }
            }
            if raced {
                continue;
            }
            // The whole line was looked at; or nobody read fits what is left: read deeper.
            if line.len() < depth {
                return Ok(());
            }
            if steps.is_empty() {
                depth = (depth * 4).min(DEEPEST);
            }
        }
        Ok(())
    }

    /// The first `depth` WAITLISTED jobs of the line, in order.
    async fn waiting_jobs(
        &self,
        event_id: &EventId,
        section: &Section,
        depth: usize,
    ) -> Result<Vec<Job>, BackendError> {
        let ids = self
            .line_head(event_id, section.as_str(), depth, true)
            .await?;
        let jobs = futures_util::stream::iter(ids)
            .map(|job_id| self.load_job(job_id))
            .buffered(LINE_PAGE)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(jobs
            .into_iter()
            .flatten()
            .filter(|job| job.status == JobStatus::Waitlisted)
            .collect())
    }

    /// One step's transaction ([`Self::write_step_as`]): a hold turns the wait the count
    /// remembers into a hold, or, for a job that joined before waits counted, is counted as a
    /// claim.
    async fn write_step(&self, step: &HandOut, terms: &SaleTerms) -> Result<Step, BackendError> {
        match self.write_step_as(step, terms, Count::Waited).await? {
            Step::Uncounted => self.write_step_as(step, terms, Count::Claimed).await,
            written => Ok(written),
        }
    }

    /// One step's transaction: the seats' holds, the job's move off the line and its event,
    /// its place's deletion and, under a seat limit, the buyer's count as `count` says for a
    /// hold, or the wait given back for a rejection.
    async fn write_step_as(
        &self,
        step: &HandOut,
        terms: &SaleTerms,
        count: Count,
    ) -> Result<Step, BackendError> {
        let job = &step.transition.job;
        let now = step.transition.event.occurred_at;
        let until = job.hold_expires_at.unwrap_or(now);
        let mut writes = step
            .seats
            .iter()
            .map(|seat| self.hold_write(job, seat, until, now))
            .collect::<Result<Vec<_>, _>>()?;
        let job_write = writes.len();
        writes.extend(self.transition(&step.transition)?);
        writes.push(self.leave_line(job).await?);
        let counted = terms.limit.is_some() && !step.seats.is_empty();
        match (terms.limit, step.seats.is_empty(), count) {
            (None, ..) => {}
            (Some(_), true, _) => writes.push(self.count_unwait(job)?),
            (Some(_), false, Count::Waited) => writes.push(self.count_served(job, until)?),
            (Some(limit), false, Count::Claimed) => match limit.ceiling_for(job.request.quantity())
            {
                Some(ceiling) => writes.push(self.count_hold(job, until, ceiling)?),
                None => return Ok(Step::OverLimit),
            },
        }
        let failed = match transact(&self.db, writes).await? {
            Transacted::Committed => return Ok(Step::Done),
            Transacted::ConditionFailed(failed) => failed,
        };
        let count_failed = counted && failed.last().copied().unwrap_or(false);
        let others_failed = failed.iter().filter(|f| **f).count() > usize::from(count_failed);
        Ok(match count {
            _ if !count_failed || failed.get(job_write).copied().unwrap_or(false) => Step::Raced,
            Count::Waited if !others_failed => Step::Uncounted,
            Count::Waited => Step::Raced,
            Count::Claimed => Step::OverLimit,
        })
    }

    /// A head whose buyer's count left no room: the buyer's lapsed holds are expired (they
    /// still count until then) and the round read again, or, with nothing lapsed, the job is
    /// REJECTED for the limit, as a claim would be. Either way the line is read again.
    async fn over_limit(&self, job: &Job, terms: &SaleTerms) -> Result<bool, BackendError> {
        let ceiling = terms
            .limit
            .and_then(|limit| limit.ceiling_for(job.request.quantity()));
        let now = self.clock.now();
        if !self
            .expire_lapsed_of(&job.event_id, &job.buyer_id, ceiling, now)
            .await?
        {
            self.end_wait(job.job_id, &terms.limit_reason()).await?;
        }
        Ok(true)
    }

    /// Serves the lines a settlement may have moved (the sections of the seats it gave back,
    /// or of its own place in line). A failure is logged, not returned: the settlement stands,
    /// and the sweeper's next pass serves the line.
    pub(crate) async fn serve_after(&self, settled: &Job, sections: Vec<Section>) {
        let terms = match self.event_meta(&settled.event_id).await {
            Ok(Some(meta)) if meta.waitlist.is_open() => meta.terms(),
            _ => return,
        };
        let mut sections = sections;
        sections.extend(settled.request.section().cloned());
        sections.sort();
        sections.dedup();
        for section in &sections {
            if let Err(error) = self.serve_line(&settled.event_id, section, &terms).await {
                tracing::warn!(event = %settled.event_id, %section, %error, "serving the waitlist failed; the sweeper retries");
            }
        }
    }

    /// Serves every open line of every event whose waitlist is open: the sweeper's pass, which
    /// hands out seats a settlement's own serving left (a crash in between, a race lost on
    /// every round, a place joined just after a serving read the line).
    pub(crate) async fn serve_open_lines(&self) -> Result<(), BackendError> {
        for event_id in self.events_with_open_waitlists().await? {
            let Some(meta) = self.event_meta(&event_id).await? else {
                continue;
            };
            let terms = meta.terms();
            for section in &meta.sections {
                let section =
                    Section::parse(section).map_err(|e| BackendError::permanent(e.to_string()))?;
                self.serve_line(&event_id, &section, &terms).await?;
            }
        }
        Ok(())
    }
}
