//! The opening run (`--opening N`): N buyers pre-queued for a sale that starts an hour later,
//! the start reached by moving the backend's clock, and the release made by the first receive
//! after it, as a worker's would. The ledger books the admissions' and the release's units by
//! key and the request log counts the release's requests; [`model`] scales them to an opening of
//! 1,000,000 pre-queued intents.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use seatclaim_aws::{PREQUEUE_SHARDS, TICKET_WRITES, WINDOW_BATCHES};
use seatclaim_core::domain::{EventSpec, NewEvent, SectionSpec};
use seatclaim_e2e::JumpClock;
use seatclaim_e2e::request_log::{Counts, RequestLog};
use seatclaim_runtime::config::AwsSettings;
use serde_json::{Value, json};

use crate::ledger::{Ledger, Usage};
use crate::model::{PARTITION_RCU, PARTITION_WCU};
use crate::sale::{Sale, admit, intents};

/// The opening modelled.
const TARGET: f64 = 1_000_000.0;
/// How long a DynamoDB call and an SQS `SendMessageBatch` take in-Region (assumptions, as the
/// worker's latency bound in `model.rs`).
const DYNAMODB_CALL_S: f64 = 0.010;
const SQS_BATCH_S: f64 = 0.020;
/// A `Query` page: DynamoDB returns at most 1 MB a page, in about this long.
const PAGE_BYTES: f64 = 1_048_576.0;
const PAGE_S: f64 = 0.050;
/// List shards the release reads at once (`prequeue.rs`).
const SHARD_CALLS: f64 = 32.0;

/// What the run measured.
pub struct Measured {
    /// Pre-queued intents.
    pub n: f64,
    /// Units booked while they were admitted, by (table or index, key).
    pub admission: HashMap<(String, String), Usage>,
    /// Units booked by the release, by (table or index, key).
    pub release: HashMap<(String, String), Usage>,
    /// The release's requests, by operation.
    pub release_requests: Counts,
}

/// Runs the opening on `settings`' tables through the counting proxy at `endpoint`.
pub async fn run(
    endpoint: &str,
    settings: &AwsSettings,
    (ledger, log): (&Ledger, &RequestLog),
    buyers: usize,
    rng: &mut fastrand::Rng,
) -> anyhow::Result<Measured> {
    let clock = Arc::new(JumpClock::default());
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .load()
        .await;
    let visibility = Duration::from_secs(60);
    let backend =
        seatclaim_e2e::emulator::open(&config, settings, visibility, clock.clone()).await?;
    let starts = jiff::Timestamp::now() + SignedDuration::from_hours(1);
    let sections = (0..10)
        .map(|i| SectionSpec {
            channel: None,
            section: char::from(b'A' + i).to_string(),
            rows: 2,
            seats_per_row: 50,
            price: None,
        })
        .collect();
    let event = NewEvent::parse(EventSpec {
        event_id: "opening".into(),
        name: "capacity opening".into(),
        sections: Some(sections),
        sale_starts_at: Some(starts.to_string()),
        // No per-buyer limit: the capacity measured is the store's, as before the default.
        max_seats_per_buyer: Some(0),
        ..EventSpec::default()
    })
    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    backend.catalog.create_event(&event).await?;
    let shape = Sale {
        seats: 1_000,
        sections: 10,
        buyers,
        hot_share: 0.1,
        hot_seats: 10,
        loops: 1,
        confirm: false,
        waitlist: false,
        lapse_share: 0.0,
        together: false,
        presale: None,
        first_buyer: 0,
    };
    let waiting = intents(&shape, &event.event_id, rng, backend.clock.now());
    ledger.take();
    log.take();
    admit(&backend, &waiting).await?;
    let (admission, _) = ledger.take();
    log.take();
    clock.advance(SignedDuration::from_hours(1) + SignedDuration::from_secs(1));
    backend.queue.receive(10, Duration::ZERO).await?;
    let (release, _) = ledger.take();
    let release_requests = log.take();
    Ok(Measured {
        n: buyers as f64,
        admission,
        release,
        release_requests,
    })
}

/// The busiest key of each table or index in `usage`, as units per second when `intents_per_s`
/// intents go through.
fn busiest(usage: &HashMap<(String, String), Usage>, per_intent: f64, intents_per_s: f64) -> Value {
    let mut by_label: BTreeMap<&str, (f64, &str, f64, &str)> = BTreeMap::new();
    // Each process adds its line counts once a second, whatever the rate (modelled per process
    // in the main report), nothing per intent.
    let intents = usage
        .iter()
        .filter(|((_, key), _)| !key.starts_with(crate::model::LINE_COUNTS_KEY));
    for ((label, key), used) in intents {
        let entry = by_label.entry(label).or_insert((0.0, "", 0.0, ""));
        if used.writes > entry.0 {
            (entry.0, entry.1) = (used.writes, key);
        }
        if used.reads > entry.2 {
            (entry.2, entry.3) = (used.reads, key);
        }
    }
    let scale = intents_per_s / per_intent;
    by_label
        .into_iter()
        .map(|(label, (writes, write_key, reads, read_key))| {
            let (w, r) = (writes * scale, reads * scale);
            json!({"table_or_index": label,
                   "busiest_write_key": write_key, "writes_per_s": w, "write_share": w / PARTITION_WCU,
                   "busiest_read_key": read_key, "reads_per_s": r, "read_share": r / PARTITION_RCU})
        })
        .collect()
}

/// The opening of [`TARGET`] pre-queued intents: admitted at `rate` before the start, then
/// read, drawn and released by one worker, and decided at `rate` as they arrive.
pub fn model(measured: &Measured, rate: f64) -> Value {
    let n = measured.n;
    let read_units: f64 = measured
        .release
        .iter()
        .filter(|((label, key), _)| label == "event-outbox" && key.contains("prequeue#"))
        .map(|(_, used)| used.reads)
        .sum();
    // A strongly consistent read unit is 4 KB: what an entry weighs, as read.
    let entry_bytes = read_units * 4096.0 / n;
    let pages_per_shard = (TARGET * entry_bytes / f64::from(PREQUEUE_SHARDS) / PAGE_BYTES).ceil();
    let read_s = pages_per_shard * (f64::from(PREQUEUE_SHARDS) / SHARD_CALLS).ceil() * PAGE_S;
    let window = (WINDOW_BATCHES * 10) as f64;
    // A window's tickets, then its batches side by side, then its count recorded.
    let window_s =
        (window / TICKET_WRITES as f64).ceil() * DYNAMODB_CALL_S + SQS_BATCH_S + DYNAMODB_CALL_S;
    let release_rate = window / window_s;
    let release_s = TARGET / release_rate;
    // Decisions keep pace with the release while it is slower than the claim loops.
    let last_decided_s = read_s + release_s.max(TARGET / rate);
    let per_intent: BTreeMap<&String, f64> = measured
        .release_requests
        .iter()
        .map(|(op, count)| (op, *count as f64 / n))
        .collect();
    json!({
        "prequeued": TARGET,
        "measured_with": n,
        "entry_bytes": entry_bytes,
        "read_seconds": read_s,
        "release_intents_per_s": release_rate,
        "release_seconds": release_s,
        "last_decided_seconds": last_decided_s,
        "release_requests_per_intent": per_intent,
        "admission_keys": busiest(&measured.admission, n, rate),
        "release_keys": busiest(&measured.release, n, release_rate),
        "memory_bytes": TARGET * (entry_bytes + 200.0),
    })
}

/// The opening's figures as the Markdown `docs/capacity.md` quotes.
pub fn markdown(opening: &Value) -> String {
    let f = |key: &str| opening[key].as_f64().unwrap_or(0.0);
    let mut out = format!(
        "An opening of {:.0} pre-queued intents (measured with {:.0}): entries of {:.0} bytes; one \
         worker reads the pre-queue in {:.1} s and releases {:.0} intents/s, so the release takes \
         {:.0} s and the last pre-queued intent is decided {:.0} s after the start; the release \
         holds about {:.0} MB.\n\n",
        f("prequeued"),
        f("measured_with"),
        f("entry_bytes"),
        f("read_seconds"),
        f("release_intents_per_s"),
        f("release_seconds"),
        f("last_decided_seconds"),
        f("memory_bytes") / 1e6,
    );
    for (title, key) in [
        (
            "Admitted before the start at the target rate",
            "admission_keys",
        ),
        ("During the release", "release_keys"),
    ] {
        out.push_str(&format!(
            "{title}:\n\n| table or index | busiest key (writes) | writes/s | of 1,000 WCU | busiest key (reads) | reads/s | of 3,000 RCU |\n|---|---|---|---|---|---|---|\n"
        ));
        for row in opening[key].as_array().into_iter().flatten() {
            let g = |k: &str| row[k].as_f64().unwrap_or(0.0);
            out.push_str(&format!(
                "| `{}` | `{}` | {:.0} | {:.0}% | `{}` | {:.0} | {:.0}% |\n",
                row["table_or_index"].as_str().unwrap_or_default(),
                row["busiest_write_key"].as_str().unwrap_or_default(),
                g("writes_per_s"),
                g("write_share") * 100.0,
                row["busiest_read_key"].as_str().unwrap_or_default(),
                g("reads_per_s"),
                g("read_share") * 100.0,
            ));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_rate_follows_the_window_and_the_entries_weigh_what_was_read() {
        let shard = ("event-outbox".to_owned(), "prequeue#e#0".to_owned());
        let measured = Measured {
            n: 1_000.0,
            admission: HashMap::new(),
            // A thousand entries read in 100 strongly consistent units: 409.6 bytes each.
            release: HashMap::from([(
                shard,
                Usage {
                    reads: 100.0,
                    writes: 0.0,
                },
            )]),
            release_requests: Counts::new(),
        };
        let model = model(&measured, 16_700.0);
        assert!((model["entry_bytes"].as_f64().unwrap() - 409.6).abs() < 1e-9);
        let window = (WINDOW_BATCHES * 10) as f64;
        let expected = window
            / ((window / TICKET_WRITES as f64).ceil() * DYNAMODB_CALL_S
                + SQS_BATCH_S
                + DYNAMODB_CALL_S);
        let rate = model["release_intents_per_s"].as_f64().unwrap();
        assert!((rate - expected).abs() < 1e-6, "{rate} against {expected}");
        assert!(model["last_decided_seconds"].as_f64().unwrap() >= TARGET / rate);
    }
}
