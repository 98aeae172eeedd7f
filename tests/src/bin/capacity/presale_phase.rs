//! Run 1's presale phase (`--presale`, `presale.rs` says its shape): the codes created, the code
//! holders' claims booked apart from the public sale's, and the report that models them at the
//! presale's own rate.

use std::collections::HashMap;

use seatclaim_core::Backend;
use seatclaim_core::domain::EventId;
use serde_json::{Value, json};

use crate::ledger::{Ledger, Usage};
use crate::model;
use crate::presale::create_codes;
use crate::sale::{self, Buyers, Outcome, Relays, Sale};

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
