//! The presale shape of run 1 (`--presale`): the event sets its last two sections aside (a fifth
//! of its seats, 20,000 of the target's 100,000) for channel `presale`, with `--codes` access
//! codes of four seats each (100,000 by default), created before the run (their puts are not
//! booked). The first half of the run's buyers are code holders, each with a code of its own,
//! claiming in the channel's sections ([`run`], booked apart and modelled at the presale's own
//! rate: every code holder within a minute); the second half is the public sale, outside them.
//! Every code claim also moves its code's count item and that item's entry in the `by-block`
//! index, which is what the model checks against a partition's limits.

use std::collections::HashMap;

use seatclaim_core::Backend;
use seatclaim_core::domain::{
    Access, AccessCode, ChannelName, ChannelSpec, CodeKey, CodeRecord, CodeTerms, EventId,
    MAX_CODES_PER_REQUEST, SeatRequest,
};
use seatclaim_core::ports::CodesCreation;
use serde_json::{Value, json};

use crate::ledger::{Ledger, Usage};
use crate::model;
use crate::sale::{self, Buyers, Outcome, Relays, Sale};

/// The channel's name.
pub const CHANNEL: &str = "presale";
/// Sections of the event set aside for the channel: the last ones.
pub const CHANNEL_SECTIONS: u32 = 2;
/// The seats one code may take.
const SEATS_PER_CODE: u32 = 4;

/// The channel as the event names it.
pub fn channel_spec() -> ChannelSpec {
    ChannelSpec {
        name: CHANNEL.into(),
        sale_starts_at: None,
        release_at: None,
    }
}

/// The key the run hashes its codes with (the deployment's, in production).
fn key() -> CodeKey {
    CodeKey::new(b"seatclaim-capacity-presale-code-key-0123".to_vec()).expect("a long key")
}

fn code_text(n: usize) -> AccessCode {
    AccessCode::parse(&format!("CAP-{n:07}")).expect("a valid code")
}

fn channel() -> ChannelName {
    ChannelName::parse(CHANNEL).expect("a valid channel")
}

/// Creates `count` codes of the channel, a request's worth at a time.
pub async fn create_codes(backend: &Backend, event: &EventId, count: usize) -> anyhow::Result<()> {
    let key = key();
    let records: Vec<CodeRecord> = (0..count)
        .map(|n| CodeRecord {
            hash: key.hash(event, &code_text(n)),
            terms: CodeTerms {
                channel: channel(),
                max_seats: SEATS_PER_CODE,
                valid_from: None,
                valid_until: None,
                bind: false,
            },
            bound_to: None,
            revoked: false,
        })
        .collect();
    for chunk in records.chunks(MAX_CODES_PER_REQUEST) {
        let created = backend.catalog.create_codes(event, chunk).await?;
        anyhow::ensure!(
            created == CodesCreation::Created(chunk.len()),
            "codes not created: {created:?}"
        );
    }
    Ok(())
}

/// Buyer `n`'s presale claim: one seat of a random channel section (a random seat, or the best
/// available), under its own code.
pub fn claim(
    n: usize,
    event: &EventId,
    sections: u32,
    section_seat: impl Fn(u32, u32) -> String,
    section_name: impl Fn(u32) -> String,
    (per_section, rng): (u32, &mut fastrand::Rng),
) -> (SeatRequest, Access) {
    let section = sections - CHANNEL_SECTIONS + rng.u32(..CHANNEL_SECTIONS);
    let request = if rng.bool() {
        SeatRequest::exact(&[section_seat(section, rng.u32(..per_section))])
    } else {
        SeatRequest::in_section(&section_name(section), 1)
    }
    .expect("a valid request");
    let access = Access {
        channel: channel(),
        code: Some(key().hash(event, &code_text(n))),
    };
    (request, access)
}

/// The presale phase as measured: what it decided, and the units it booked by key.
pub struct Phase {
    /// Its decisions.
    pub outcome: Outcome,
    /// Its code holders.
    pub buyers: usize,
    /// Units by (table or index, key).
    pub keys: HashMap<(String, String), Usage>,
}

/// Creates `codes` codes for `event` (not booked), then runs `buyers` code holders of `public`'s
/// shape (the event's public sale) through the claim, booked apart.
pub async fn run(
    (backend, relays): (&Backend, &Relays),
    (public, event): (&Sale, &EventId),
    (codes, buyers): (usize, usize),
    (ledger, rng): (&Ledger, &mut fastrand::Rng),
) -> anyhow::Result<Phase> {
    eprintln!("capacity: creating {codes} access codes");
    create_codes(backend, event, codes).await?;
    let holders = Sale {
        presale: Some(Buyers::CodeHolders),
        buyers,
        first_buyer: 0,
        ..public.clone()
    };
    ledger.take();
    eprintln!("capacity: run 1's presale, {buyers} code holders");
    let outcome = sale::run(backend, relays, &holders, event, rng).await?;
    let (keys, _) = ledger.take();
    Ok(Phase {
        outcome,
        buyers,
        keys,
    })
}

/// The seconds in which every code holder arrives: a minute, as the public sale's million.
const ARRIVALS_S: f64 = 60.0;

/// The presale's report: its busiest keys at its own rate (`codes` holders in a minute), and
/// at the public sale's `rate` for comparison; as JSON and as the document's text.
pub fn report(phase: &Phase, codes: usize, rate: f64) -> (Value, String) {
    let own_rate = codes as f64 / ARRIVALS_S;
    let intents = phase.buyers as f64;
    let rows = model::key_rows(&phase.keys, intents, own_rate, &[]);
    let at_target = model::key_rows(&phase.keys, intents, rate, &[]);
    let (key, share) = busiest_write(&at_target);
    let text = format!(
        "The presale: {} code holders (each under a code of its own), {} held, {} rejected, \
         modelled at {own_rate:.0} intents/s ({codes} code holders within a minute):\n\n{}\n\
         At the public sale's {rate:.0} intents/s instead, its busiest write key would be `{key}` \
         at {:.0}% of 1,000 WCU.\n\nThe public sale after it, at the target rate:\n\n",
        phase.buyers,
        phase.outcome.held,
        phase.outcome.rejected,
        model::key_table(&rows),
        100.0 * share,
    );
    let value = json!({
        "code_holders": phase.buyers, "codes": codes, "held": phase.outcome.held,
        "rejected": phase.outcome.rejected, "rate_intents_per_s": own_rate,
        "partition_keys": rows, "at_the_target_rate": at_target,
    });
    (value, text)
}

/// The busiest write key of the rows, and its share of a partition's writes.
fn busiest_write(rows: &Value) -> (String, f64) {
    (rows.as_array().into_iter().flatten())
        .map(|row| {
            let key = row["busiest_write_key"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (key, row["write_share"].as_f64().unwrap_or(0.0))
        })
        .fold((String::new(), 0.0), |best, row| {
            if row.1 > best.1 { row } else { best }
        })
}
