//! A flash sale driven through the real AWS adapters: buyers admitted as the API admits them,
//! intents decided by several claim loops as the worker decides them, events relayed by several
//! relays, and (optionally) every hold confirmed. CPU time is measured per phase on the threads
//! that run this code (the ledger's proxy runs on threads of its own, left out).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use seatclaim_core::Backend;
use seatclaim_core::app::relay_once;
use seatclaim_core::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, JobAction, JobId, NewEvent, SeatRequest,
    SectionSpec,
};
use seatclaim_e2e::process_batch;
use seatclaim_runtime::loops::Limits;

use crate::presale;

/// Threads of the ledger's proxy: their CPU time is the measurement's, not the product's.
pub const PROXY_THREAD: &str = "ledger-proxy";

/// The sale's shape.
#[derive(Debug, Clone)]
pub struct Sale {
    /// Seats of the event, split evenly over `sections` sections of rows of 50.
    pub seats: u32,
    /// Sections.
    pub sections: u32,
    /// Buyers, each with one intent.
    pub buyers: usize,
    /// Share of buyers who want one of the hot seats.
    pub hot_share: f64,
    /// The hot seats: the first seats of the first section.
    pub hot_seats: u32,
    /// Claim loops deciding side by side.
    pub loops: usize,
    /// Whether every hold is confirmed (bought) after the claims.
    pub confirm: bool,
    /// Whether the event keeps a waitlist: section requests that find too few seats wait in
    /// line, and `lapse_share` of the holds end unpaid, their seats served to the line, before
    /// the rest are confirmed and the waitlist closes.
    pub waitlist: bool,
    /// Share of holds that end unpaid in a sale with a waitlist.
    pub lapse_share: f64,
    /// Whether section requests ask for 1 to 4 seats together (a block in one row) instead of
    /// one seat.
    pub together: bool,
    /// Whether the event sets its last sections aside for a presale's channel (`presale.rs`),
    /// and who the buyers are then.
    pub presale: Option<Buyers>,
    /// The number of the first buyer (`buyer-<n>`), so that two runs on one event have buyers
    /// of their own.
    pub first_buyer: usize,
}

/// Who a presale's buyers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buyers {
    /// Code holders claiming the channel's sections, each under a code of its own.
    CodeHolders,
    /// The public, outside the channel's sections.
    Public,
}

/// What the sale did, and the CPU time it took.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Jobs held (and confirmed, when asked).
    pub held: usize,
    /// Jobs rejected.
    pub rejected: usize,
    /// Jobs that joined a waitlist.
    pub waitlisted: usize,
    /// Holds that ended unpaid (their seats served to the line).
    pub lapsed: usize,
    /// CPU seconds of admission (the API's share), confirmations included.
    pub api_cpu: f64,
    /// CPU seconds of claims and relaying (the worker's share).
    pub worker_cpu: f64,
}

/// CPU seconds used so far by this process's threads, the proxy's excepted.
pub fn own_cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ticks_per_second = 100.0;
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| !name.trim().starts_with(PROXY_THREAD))
        })
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        .filter_map(|stat| {
            // Fields after the command's closing parenthesis: utime is the 12th, stime the 13th.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let user: f64 = fields.get(11)?.parse().ok()?;
            let system: f64 = fields.get(12)?.parse().ok()?;
            Some((user + system) / ticks_per_second)
        })
        .sum()
}

fn section_name(index: u32) -> String {
    char::from_u32(u32::from('A') + index).map_or_else(|| format!("S{index}"), String::from)
}

/// Creates the sale's event (not part of any per-intent figure).
pub async fn create_event(
    backend: &Backend,
    sale: &Sale,
    event_id: &str,
) -> anyhow::Result<EventId> {
    let per_section = sale.seats / sale.sections;
    let sections = (0..sale.sections)
        .map(|index| SectionSpec {
            channel: None,
            section: section_name(index),
            rows: per_section.div_ceil(50),
            seats_per_row: per_section.min(50),
            price: None,
        })
        .collect::<Vec<_>>();
    let mut sections = sections;
    if sale.presale.is_some() {
        let set_aside = sale.sections.saturating_sub(presale::CHANNEL_SECTIONS) as usize;
        for section in sections.iter_mut().skip(set_aside) {
            section.channel = Some(presale::CHANNEL.into());
        }
    }
    let event = NewEvent::parse(EventSpec {
        channels: sale.presale.map(|_| vec![presale::channel_spec()]),
        event_id: event_id.into(),
        name: "capacity".into(),
        hold_seconds: Some(600),
        sections: Some(sections),
        waitlist: Some(sale.waitlist),
        // No per-buyer limit: the capacity measured is the store's, as before the default.
        max_seats_per_buyer: Some(0),
        ..EventSpec::default()
    })
    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    backend.catalog.create_event(&event).await?;
    Ok(event.event_id)
}

/// The buyers' intents: `hot_share` on the hot seats, the rest half on a random seat and half on
/// any seat of a random section (or, `together`, 1 to 4 adjacent seats of one).
pub fn intents(
    sale: &Sale,
    event: &EventId,
    rng: &mut fastrand::Rng,
    at: jiff::Timestamp,
) -> Vec<Intent> {
    let per_section = sale.seats / sale.sections;
    let seat = |section: u32, index: u32| {
        let row = index / 50 + 1;
        let number = index % 50 + 1;
        format!("{}-{row}-{number}", section_name(section))
    };
    // Public buyers stay out of the channel's sections.
    let public_sections = if sale.presale.is_some() {
        sale.sections - presale::CHANNEL_SECTIONS
    } else {
        sale.sections
    };
    (sale.first_buyer..sale.first_buyer + sale.buyers)
        .map(|n| {
            let draw = rng.f64();
            let mut access = None;
            let request = if sale.presale == Some(Buyers::CodeHolders) {
                let named = (sale.sections, &seat, section_name);
                let (request, code) =
                    presale::claim(n, event, named.0, named.1, named.2, (per_section, rng));
                access = Some(code);
                Ok(request)
            } else if draw < sale.hot_share {
                SeatRequest::exact(&[seat(0, rng.u32(..sale.hot_seats))])
            } else if draw < sale.hot_share + (1.0 - sale.hot_share) / 2.0 {
                SeatRequest::exact(&[seat(rng.u32(..public_sections), rng.u32(..per_section))])
            } else if sale.together {
                SeatRequest::together_in(&section_name(rng.u32(..public_sections)), rng.i64(1..=4))
            } else {
                SeatRequest::in_section(&section_name(rng.u32(..public_sections)), 1)
            }
            .expect("a valid request");
            let buyer_id = BuyerId::parse(&format!("buyer-{n}")).expect("a buyer id");
            Intent {
                access,
                job_id: JobId::for_key(&buyer_id, &key_of(&buyer_id)),
                event_id: event.clone(),
                buyer_id,
                request,
                accepted_at: at,
                opens_at: None,
            }
        })
        .collect()
}

/// A buyer's one key: its own id.
fn key_of(buyer: &BuyerId) -> IdempotencyKey {
    IdempotencyKey::parse(buyer.as_str()).expect("a buyer id is a valid key")
}

/// Admits every intent, 32 at a time, as concurrent POSTs would; a transient failure (the API's
/// 503) is retried with the same key, as a client does.
pub async fn admit(backend: &Backend, intents: &[Intent]) -> anyhow::Result<()> {
    let admitted = futures_util::stream::iter(intents)
        .map(|intent| async move {
            let key = key_of(&intent.buyer_id);
            let mut attempt = 0;
            loop {
                match backend.admissions.admit(&key, intent).await {
                    Err(error) if error.is_transient() && attempt < 10 => attempt += 1,
                    other => return other,
                }
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    for result in admitted {
        result?;
    }
    Ok(())
}

/// Decides `total` intents with `loops` claim loops; returns how many were held, rejected and
/// waitlisted.
pub async fn decide(backend: &Backend, sale: &Sale, total: usize) -> anyhow::Result<[usize; 3]> {
    let counts = Arc::new([(); 3].map(|()| AtomicUsize::new(0)));
    let done = Arc::new(AtomicUsize::new(0));
    let claim_loop = |backend: Backend| {
        let (counts, done) = (counts.clone(), done.clone());
        async move {
            while done.load(Ordering::Relaxed) < total {
                let deliveries = backend.queue.receive(10, Duration::from_secs(1)).await?;
                let outcome = process_batch(&backend, deliveries, Limits::attempts(20)).await;
                let decided = [outcome.held, outcome.rejected, outcome.waitlisted];
                for (count, n) in counts.iter().zip(decided) {
                    count.fetch_add(n, Ordering::Relaxed);
                }
                // A batch that failed is claimed again intent by intent, and what it decided
                // comes back as already decided: those are decisions of this sale too.
                done.fetch_add(
                    decided.iter().sum::<usize>() + outcome.already_decided + outcome.dead_lettered,
                    Ordering::Relaxed,
                );
            }
            anyhow::Ok(())
        }
    };
    futures_util::future::try_join_all((0..sale.loops).map(|_| claim_loop(backend.clone())))
        .await?;
    Ok(counts.each_ref().map(|count| count.load(Ordering::Relaxed)))
}

/// The relays of a run (a backend each, as each worker process is one relay), and a backend
/// that bypasses the ledger, to tell when the outbox is empty: that check reads every shard, and
/// no production process makes it between rounds.
pub struct Relays {
    /// The relays, whose requests are booked.
    pub each: Vec<Backend>,
    /// The uncounted view of the outbox.
    pub watcher: Backend,
}

/// Publishes the whole outbox with the relays side by side. They run after the claims:
/// at the target rate every shard has a deep backlog each round, which is what this models
/// (relays racing a slow emulator would find a few entries a round and overstate their reads).
async fn relay_all(relays: &Relays) -> anyhow::Result<()> {
    let watcher = &relays.watcher;
    let relay_loop = |backend: Backend| async move {
        // A transient failure is retried as the worker's relay does: the page stays unpublished.
        let round = || async {
            match relay_once(&backend).await {
                Err(error) if error.is_transient() => Ok(1),
                other => other,
            }
        };
        while round().await? > 0 || watcher.outbox.oldest_unpublished().await?.is_some() {
            // The rest is leased by the other relays: the worker's relay rests between rounds
            // that find nothing of its own.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::Ok(())
    };
    futures_util::future::try_join_all(relays.each.iter().cloned().map(relay_loop)).await?;
    Ok(())
}

/// Settles every HELD job of `intents` for which `pick` says so with `action` (the buyers pay,
/// or let the hold go), 32 at a time; returns how many.
async fn settle_held(
    backend: &Backend,
    intents: &[Intent],
    action: JobAction,
    pick: impl Fn(usize) -> bool,
) -> anyhow::Result<usize> {
    let settled = futures_util::stream::iter(intents.iter().enumerate())
        .filter(|(n, _)| std::future::ready(pick(*n)))
        .map(|(_, intent)| async move {
            let job = backend.jobs.job(intent.job_id).await?;
            if !job.is_some_and(|job| job.status == seatclaim_core::domain::JobStatus::Held) {
                return anyhow::Ok(false);
            }
            // A transient failure (the API's 503) is retried, as a buyer's client does.
            let mut attempt = 0;
            loop {
                match backend
                    .inventory
                    .settle(
                        intent.job_id,
                        action,
                        &seatclaim_core::domain::Tender::Waived,
                    )
                    .await
                {
                    Err(error) if error.is_transient() && attempt < 10 => attempt += 1,
                    other => break other.map(|_| true).map_err(Into::into),
                }
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    let mut count = 0;
    for result in settled {
        count += usize::from(result?);
    }
    Ok(count)
}

/// Confirms every HELD job of `intents` (the buyers pay), then relays the Sold events.
pub async fn confirm_all(
    backend: &Backend,
    relays: &Relays,
    intents: &[Intent],
) -> anyhow::Result<()> {
    settle_held(backend, intents, JobAction::Confirm, |_| true).await?;
    relay_all(relays).await
}

/// A sale with a waitlist: `lapse_share` of the holds end unpaid (a cancel: the same release
/// and serving of the line as the sweeper's expiry, without waiting out the hold), which hands
/// their seats to the line; returns how many.
async fn lapse_into_line(
    backend: &Backend,
    sale: &Sale,
    intents: &[Intent],
    rng: &mut fastrand::Rng,
) -> anyhow::Result<usize> {
    let lapsing: Vec<bool> = intents
        .iter()
        .map(|_| rng.f64() < sale.lapse_share)
        .collect();
    settle_held(backend, intents, JobAction::Cancel, |n| lapsing[n]).await
}

/// Intents admitted before the claim loops take them: SQS keeps a short queue in a sale, and
/// moto's SQS slows with a long one (each send counts the queue's delayed messages).
const WAVE: usize = 1_000;

/// Runs the whole sale on `backend`, wave after wave of admissions each decided before the
/// next, and measures each phase's CPU time.
pub async fn run(
    backend: &Backend,
    relays: &Relays,
    sale: &Sale,
    event: &EventId,
    rng: &mut fastrand::Rng,
) -> anyhow::Result<Outcome> {
    let intents = intents(sale, event, rng, backend.clock.now());
    let mut outcome = Outcome::default();
    for wave in intents.chunks(WAVE) {
        let start = own_cpu_seconds();
        admit(backend, wave).await?;
        let admitted = own_cpu_seconds();
        let [held, rejected, waitlisted] = decide(backend, sale, wave.len()).await?;
        outcome.api_cpu += admitted - start;
        outcome.worker_cpu += own_cpu_seconds() - admitted;
        outcome.held += held;
        outcome.rejected += rejected;
        outcome.waitlisted += waitlisted;
    }
    let start = own_cpu_seconds();
    relay_all(relays).await?;
    outcome.worker_cpu += own_cpu_seconds() - start;
    if sale.waitlist {
        let start = own_cpu_seconds();
        outcome.lapsed = lapse_into_line(backend, sale, &intents, rng).await?;
        outcome.api_cpu += own_cpu_seconds() - start;
    }
    if sale.confirm {
        let start = own_cpu_seconds();
        confirm_all(backend, relays, &intents).await?;
        outcome.api_cpu += own_cpu_seconds() - start;
    }
    if sale.waitlist {
        let start = own_cpu_seconds();
        backend.inventory.close_waitlist(event).await?;
        relay_all(relays).await?;
        outcome.api_cpu += own_cpu_seconds() - start;
    }
    Ok(outcome)
}
