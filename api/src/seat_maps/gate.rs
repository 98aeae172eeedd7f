//! Reservations first under a browse storm: every seat-map answer spends tokens of one budget per
//! process, refilled at a steady rate (`SEATCLAIM_SEAT_MAP_READS_PER_SEC`), so however many
//! readers ask, the process spends on maps at most what that budget sends. A read that finds the
//! budget spent waits its turn (first come, first served, costing no CPU while it waits) for at
//! most `SEATCLAIM_SEAT_MAP_READ_WAIT_MS`, then is shed with `503` and `Retry-After`. Reads wait
//! in this gate of their own, never in front of a claim: a reservation neither passes through it
//! nor shares its queue. A client that reads in a loop is slowed to the budget's pace by the wait
//! itself, where an immediate refusal would only bring it back at once.
//!
//! Each waiting read gets a wait of its own, spread evenly between half the longest wait and all
//! of it. With one wait for all, a storm that began at one moment was shed at one moment, every
//! second: its readers' next requests came back together, and the burst of answers and requests
//! held up the reservations that arrived with it (a p99 of 6 to 14 ms once a second, against
//! 2 ms between the waves, with the process at a fifth of its core).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Once, Weak};
use std::time::Duration;

use tokio::sync::Semaphore;

/// Each started piece of this many bytes of body costs one more token than the answer's one:
/// what a seat map costs is mostly the copying of its bytes.
const TOKEN_BYTES: usize = 16 * 1024;
/// How often the budget is refilled.
const REFILL_EVERY: Duration = Duration::from_millis(10);
/// The most reads waiting at once; one more is shed at once, so that waiting readers never fill
/// the slots of `SEATCLAIM_MAX_IN_FLIGHT` that reservations need.
const MOST_WAITING: usize = 1024;

/// The default budget: 5,000 tokens a second. A token costs a core some 5 to 10 us (a 304 is
/// one; a whole 10,000-seat map is 3 gzip-compressed, some 170 us and 33 tokens uncompressed),
/// so the maps take a few hundredths of one core, whatever the storm.
pub const DEFAULT_READS_PER_SEC: u32 = 5_000;
/// The default longest wait of a read, in milliseconds.
pub const DEFAULT_READ_WAIT_MS: u64 = 1_000;

/// What the gate lets through: its rate in tokens per second (0: every read passes at once) and
/// how long a read may wait for its turn.
#[derive(Debug, Clone, Copy)]
pub struct ReadBudget {
    /// Tokens per second: an answer costs one, plus one per started 16 KiB of body.
    pub per_sec: u32,
    /// The longest a read waits before it is shed.
    pub wait: Duration,
}

impl Default for ReadBudget {
    fn default() -> Self {
        Self {
            per_sec: DEFAULT_READS_PER_SEC,
            wait: Duration::from_millis(DEFAULT_READ_WAIT_MS),
        }
    }
}

/// The gate of one process's seat-map reads.
pub(super) struct ReadGate {
    budget: ReadBudget,
    tokens: Arc<Semaphore>,
    waiting: AtomicUsize,
    /// Reads that have waited so far: the n-th one's wait is [`spread`]`(n)`.
    waited: AtomicU64,
    refill: Once,
}

/// A read the gate sheds: the budget stayed spent for as long as the read could wait, or too
/// many reads wait already.
#[derive(Debug)]
pub struct Shed;

impl ReadGate {
    pub(super) fn new(budget: ReadBudget) -> Self {
        Self {
            tokens: Arc::new(Semaphore::new(burst(budget.per_sec))),
            budget,
            waiting: AtomicUsize::new(0),
            waited: AtomicU64::new(0),
            refill: Once::new(),
        }
    }

    /// Waits until an answer of `bytes` of body may be sent, or sheds it (counted in
    /// `seatclaim_seat_map_reads_shed_total`).
    pub(super) async fn admit(&self, bytes: usize) -> Result<(), Shed> {
        let admitted = self.turn(bytes).await;
        if admitted.is_err() {
            metrics::counter!("seatclaim_seat_map_reads_shed_total").increment(1);
        }
        admitted
    }

    async fn turn(&self, bytes: usize) -> Result<(), Shed> {
        if self.budget.per_sec == 0 {
            return Ok(());
        }
        self.refill
            .call_once(|| refill(Arc::downgrade(&self.tokens), self.budget.per_sec));
        let cost = u32::try_from(1 + bytes / TOKEN_BYTES)
            .unwrap_or(u32::MAX)
            .min(u32::try_from(burst(self.budget.per_sec)).unwrap_or(u32::MAX));
        if let Ok(permit) = self.tokens.try_acquire_many(cost) {
            permit.forget();
            return Ok(());
        }
        let _waits = Waiting::join(&self.waiting).ok_or(Shed)?;
        let wait = spread(
            self.budget.wait,
            self.waited.fetch_add(1, Ordering::Relaxed),
        );
        match tokio::time::timeout(wait, self.tokens.acquire_many(cost)).await {
            Ok(Ok(permit)) => {
                permit.forget();
                Ok(())
            }
            // The semaphore is never closed; were it, reads would pass as without a budget.
            Ok(Err(_)) => Ok(()),
            Err(_) => Err(Shed),
        }
    }
}

/// A read counted among those waiting until it is dropped: answered, shed, or given up by its
/// client (whose request is dropped mid-wait).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    /// Counts one more waiting read, unless [`MOST_WAITING`] wait already.
    fn join(waiting: &'a AtomicUsize) -> Option<Self> {
        let before = waiting.fetch_add(1, Ordering::Relaxed);
        let counted = Self(waiting);
        (before < MOST_WAITING).then_some(counted)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The wait of the `n`-th read to wait: between half of `longest` and all of it, at a point of
/// Fibonacci hashing's sequence (`n` times 2^64 over the golden ratio), which puts any run of
/// consecutive reads at points spread evenly over that range.
fn spread(longest: Duration, n: u64) -> Duration {
    const STEPS: u32 = 1 << 10;
    let step = u32::try_from(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54).unwrap_or(0);
    longest / 2 + longest / 2 * step / STEPS
}

/// The most tokens saved up: one second of the rate, so a quiet spell lets a burst through.
fn burst(per_sec: u32) -> usize {
    usize::try_from(per_sec).unwrap_or(usize::MAX)
}

/// Refills `tokens` at `per_sec` until the gate is dropped.
fn refill(tokens: Weak<Semaphore>, per_sec: u32) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(REFILL_EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last = tokio::time::Instant::now();
        let mut owed = 0.0_f64;
        loop {
            ticks.tick().await;
            let Some(tokens) = tokens.upgrade() else {
                return;
            };
            let now = tokio::time::Instant::now();
            owed += now.duration_since(last).as_secs_f64() * f64::from(per_sec);
            last = now;
            let room = burst(per_sec).saturating_sub(tokens.available_permits());
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "owed is finite, non-negative and at most a second of the rate"
            )]
            let whole = (owed.floor() as usize).min(room);
            if whole > 0 {
                tokens.add_permits(whole);
            }
            // What the full budget could not take is not saved up beyond it.
            owed = if whole < room {
                owed - owed.floor()
            } else {
                0.0
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(per_sec: u32, wait_ms: u64) -> ReadGate {
        ReadGate::new(ReadBudget {
            per_sec,
            wait: Duration::from_millis(wait_ms),
        })
    }

    #[tokio::test]
    async fn reads_past_the_budget_wait_for_the_refill_and_are_shed_past_their_wait() {
        let gate = gate(100, 500);
        for n in 0..100 {
            assert!(
                gate.admit(0).await.is_ok(),
                "read {n} of the saved-up second"
            );
        }
        assert!(gate.tokens.try_acquire().is_err(), "the budget is spent");
        assert!(gate.admit(0).await.is_ok(), "the next waits for a refill");
        // A whole map of 1 MiB costs the whole second's budget: more than 20 ms bring.
        let gate = ReadGate {
            budget: ReadBudget {
                wait: Duration::from_millis(20),
                ..gate.budget
            },
            ..gate
        };
        assert!(gate.admit(1 << 20).await.is_err(), "shed after its wait");
    }

    #[tokio::test]
    async fn a_body_costs_a_token_per_started_sixteen_kib() {
        let gate = gate(10, 0);
        assert!(gate.admit(4 * TOKEN_BYTES).await.is_ok(), "five tokens");
        assert!(gate.admit(4 * TOKEN_BYTES - 1).await.is_ok(), "four");
        assert!(gate.admit(0).await.is_ok(), "the tenth");
        assert_eq!(gate.tokens.available_permits(), 0, "all ten spent");
    }

    #[tokio::test]
    async fn past_the_most_waiting_a_read_is_shed_at_once() {
        let gate = gate(1, 60_000);
        gate.waiting.store(MOST_WAITING, Ordering::Relaxed);
        assert!(gate.admit(0).await.is_ok(), "a token saved up passes");
        assert!(
            gate.admit(0).await.is_err(),
            "none left and no room to wait"
        );
        assert_eq!(
            gate.waiting.load(Ordering::Relaxed),
            MOST_WAITING,
            "uncounted again"
        );
    }

    #[tokio::test]
    async fn a_read_dropped_while_it_waits_is_no_longer_counted() {
        let gate = gate(1, 60_000);
        assert!(gate.admit(0).await.is_ok(), "the one token");
        let waiting = gate.admit(0);
        assert!(
            tokio::time::timeout(Duration::from_millis(1), waiting)
                .await
                .is_err(),
            "it waits, and its client gives up"
        );
        assert_eq!(gate.waiting.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn waits_are_spread_over_the_upper_half_of_the_longest() {
        let longest = Duration::from_millis(1_000);
        let waits: Vec<Duration> = (0..1_000).map(|n| spread(longest, n)).collect();
        assert!(waits.iter().all(|w| *w >= longest / 2 && *w <= longest));
        // Every tenth of the range gets its share of any run of reads, give or take a few.
        for tenth in 0..10_u32 {
            let from = longest / 2 + longest / 20 * tenth;
            let within = waits
                .iter()
                .filter(|w| **w >= from && **w < from + longest / 20)
                .count();
            assert!(
                (90..=110).contains(&within),
                "tenth {tenth}: {within} waits"
            );
        }
    }

    #[tokio::test]
    async fn no_budget_lets_every_read_through() {
        let gate = gate(0, 0);
        for _ in 0..10_000 {
            assert!(gate.admit(1 << 20).await.is_ok());
        }
    }
}
