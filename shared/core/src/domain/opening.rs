//! A sale's opening. Intents admitted before an event's `sale_starts_at` wait in a pre-queue,
//! undecided; at the start they are put in a uniformly random order, which nobody can race for,
//! and decided in it, before any intent admitted after the start.
//!
//! The order is reproducible from its seed, so the draw can be audited afterwards: with
//! `seed` (32 bytes from the operating system's CSPRNG) and the pre-queued job ids in
//! admission order, the Fisher-Yates shuffle below gives the order, and its [`digest`] the
//! published digest. For `i` from `n - 1` down to 1 it swaps item `i` with item `j`, where `j`
//! is uniform in `0..=i`: the first 8 bytes (little-endian) of
//! `SHA-256(seed || i as u64 little-endian || attempt as u32 little-endian)`, taken modulo
//! `i + 1` when below the largest multiple of `i + 1` that fits in a `u64` (else the next
//! attempt: rejection sampling keeps it uniform).

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{ChannelName, EventId, JobId};

/// The `detail-type` of [`SaleOpened`].
pub const SALE_OPENED: &str = "SaleOpened";

/// The seed of a draw: 32 bytes, shown as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Seed([u8; 32]);

impl Seed {
    /// A seed from bytes the caller drew from a cryptographically secure source.
    #[must_use]
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// 32 bytes from the operating system's CSPRNG; `None` if it has none to give.
    #[must_use]
    pub fn fresh() -> Option<Self> {
        let mut bytes = [0_u8; 32];
        getrandom::fill(&mut bytes).ok()?;
        Some(Self(bytes))
    }

    /// Reads a seed back from its 64 hex digits.
    #[must_use]
    pub fn parse(hex: &str) -> Option<Self> {
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut bytes = [0_u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
            *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
        }
        Some(Self(bytes))
    }

    /// A number uniform in `0..bound` (`bound` > 0), the `index`-th of this seed's stream.
    fn uniform(&self, index: u64, bound: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % bound;
        (0_u32..)
            .map(|attempt| {
                let hash = Sha256::new()
                    .chain_update(self.0)
                    .chain_update(index.to_le_bytes())
                    .chain_update(attempt.to_le_bytes())
                    .finalize();
                let mut first = [0_u8; 8];
                first.copy_from_slice(&hash[..8]);
                u64::from_le_bytes(first)
            })
            .find(|drawn| *drawn < zone)
            .map_or(0, |drawn| drawn % bound)
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seed({self})")
    }
}

/// Puts `items` (the pre-queue in admission order) in the order `seed` draws.
pub fn shuffle<T>(seed: &Seed, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let bound = i as u64 + 1;
        let j = usize::try_from(seed.uniform(i as u64, bound)).unwrap_or(i);
        items.swap(i, j);
    }
}

/// The digest of a drawn order: SHA-256 of the job ids in that order, each followed by a
/// newline, in lowercase hex.
#[must_use]
pub fn digest(order: &[JobId]) -> String {
    let hash = order
        .iter()
        .fold(Sha256::new(), |hash, job_id| {
            hash.chain_update(job_id.to_string()).chain_update(b"\n")
        })
        .finalize();
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The start an intent waits for, and whose pre-queue it waits in: its channel's own start
/// when its channel announced one (a presale opens before the public), else its event's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Start {
    /// The channel whose own start it is; `None` for the event's.
    pub channel: Option<ChannelName>,
    /// When that sale opens.
    pub at: Timestamp,
}

/// An opening's draw: the pre-queue's order, and what is published of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draw {
    /// The pre-queued jobs in the order they are decided.
    pub order: Vec<JobId>,
    /// What the audit needs to check it.
    pub opened: SaleOpened,
}

impl Draw {
    /// Draws the order of `queued` (the pre-queue of `event_id`'s `start`, in admission order)
    /// from `seed`.
    #[must_use]
    pub fn new(
        event_id: EventId,
        start: Start,
        seed: Seed,
        mut queued: Vec<JobId>,
        now: Timestamp,
    ) -> Self {
        shuffle(&seed, &mut queued);
        let opened = SaleOpened {
            kind: SALE_OPENED.to_owned(),
            event_id,
            channel: start.channel,
            sale_starts_at: start.at,
            seed: seed.to_string(),
            shuffled: queued.len() as u64,
            digest: digest(&queued),
            occurred_at: now,
        };
        Self {
            order: queued,
            opened,
        }
    }
}

/// The published record of an opening: enough to check that the order decided was the one
/// drawn from this seed (re-run [`shuffle`] on the pre-queue and compare [`digest`]s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaleOpened {
    /// Always [`SALE_OPENED`], so a consumer of the log tells it from a job's event.
    #[serde(rename = "type")]
    pub kind: String,
    /// The event that opened.
    pub event_id: EventId,
    /// The channel whose own start this was; absent for the event's own opening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<ChannelName>,
    /// Its announced start.
    pub sale_starts_at: Timestamp,
    /// The draw's seed, 64 hex digits.
    pub seed: String,
    /// How many pre-queued intents were shuffled.
    pub shuffled: u64,
    /// The digest of the drawn order ([`digest`]).
    pub digest: String,
    /// When the draw was made.
    pub occurred_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(byte: u8) -> Seed {
        Seed::from_bytes([byte; 32])
    }

    #[test]
    fn a_seed_reads_back_from_its_hex() {
        let seed = seed(0xab);
        assert_eq!(seed.to_string().len(), 64);
        assert_eq!(Seed::parse(&seed.to_string()), Some(seed));
        assert_eq!(Seed::parse("xy"), None);
    }

    #[test]
    fn the_same_seed_draws_the_same_order_and_another_seed_another() {
        let mut a: Vec<u32> = (0..100).collect();
        let mut b = a.clone();
        let mut c = a.clone();
        shuffle(&seed(1), &mut a);
        shuffle(&seed(1), &mut b);
        shuffle(&seed(2), &mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>(), "a permutation");
    }

    /// Every item is about as likely in every place: over 6,000 draws of three items, each of
    /// the six orders comes up about 1,000 times (a chi-square test at 5 degrees of freedom;
    /// 20.5 is its 0.1% critical value).
    #[test]
    fn every_order_is_equally_likely() {
        let mut counts = std::collections::HashMap::new();
        for n in 0..6_000_u32 {
            let mut bytes = [0_u8; 32];
            bytes[..4].copy_from_slice(&n.to_le_bytes());
            let mut items = [0, 1, 2];
            shuffle(&Seed::from_bytes(bytes), &mut items);
            *counts.entry(items).or_insert(0_u32) += 1;
        }
        assert_eq!(counts.len(), 6);
        let chi: f64 = counts
            .values()
            .map(|&seen| (f64::from(seen) - 1_000.0).powi(2) / 1_000.0)
            .sum();
        assert!(chi < 20.5, "chi-square {chi} over {counts:?}");
    }

    #[test]
    fn the_digest_is_of_the_order_drawn() {
        let (a, b) = (JobId::time_ordered(), JobId::time_ordered());
        assert_ne!(digest(&[a, b]), digest(&[b, a]));
        assert_eq!(digest(&[]).len(), 64);
        let start = Start {
            channel: None,
            at: Timestamp::UNIX_EPOCH,
        };
        let draw = Draw::new(
            EventId::parse("e1").unwrap(),
            start,
            seed(7),
            vec![a, b],
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(draw.opened.digest, digest(&draw.order));
        assert_eq!(draw.opened.shuffled, 2);
        assert_eq!(draw.opened.seed, seed(7).to_string());
    }
}
