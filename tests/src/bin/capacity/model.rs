//! The capacity model: measured units per intent scaled to the target rate, set against
//! DynamoDB's per-partition limits and the service quotas, and priced at list prices.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::ledger::Usage;

/// Limits of one partition (DynamoDB developer guide, "Best practices for designing and using
/// partition keys effectively").
pub const PARTITION_WCU: f64 = 1_000.0;
/// See [`PARTITION_WCU`].
pub const PARTITION_RCU: f64 = 3_000.0;
/// PutEvents requests per second per account in us-east-1 (EventBridge quotas page).
pub const PUT_EVENTS_QUOTA: f64 = 10_000.0;
/// In-flight messages of a standard SQS queue (SQS quotas page).
pub const SQS_IN_FLIGHT_QUOTA: f64 = 120_000.0;

/// List prices, us-east-1, on-demand, as published by AWS (the DynamoDB prices after the
/// November 2024 reduction), as of 2026-12-01: dollars per unit.
pub mod price {
    /// Per write request unit.
    pub const WRU: f64 = 0.625e-6;
    /// Per read request unit.
    pub const RRU: f64 = 0.125e-6;
    /// Per SQS standard request (64 KiB chunk).
    pub const SQS_REQUEST: f64 = 0.40e-6;
    /// Per EventBridge custom event (64 KiB chunk).
    pub const EVENT: f64 = 1.00e-6;
    /// Per Fargate vCPU-hour (Linux, x86).
    pub const VCPU_HOUR: f64 = 0.040_48;
    /// Per Fargate GB-hour.
    pub const GB_HOUR: f64 = 0.004_445;
}

/// Target utilisation of a task's vCPU (tasks of 1 vCPU and 2 GB, the template's defaults).
const CPU_TARGET: f64 = 0.5;
/// Intents one claim loop decides per second on AWS: a batch of 10 in about 50 ms (the
/// receive, then per intent a job read, a seat read and the transaction, side by side; about
/// 10 ms each in-Region).
const LOOP_INTENTS_PER_SECOND: f64 = 200.0;

/// The prefix of the items that count each sale's line (`admitted`, `decided`: queue
/// positions, `shared/aws/src/line/counts.rs`). Each process adds its counts there
/// once a second, whatever the rate, so those writes are modelled per process
/// (`line_counts`), never scaled per intent from the runs' (which last as long as the emulator
/// takes).
pub const LINE_COUNTS_KEY: &str = "counts#";
/// How often each process adds its line counts, and each API process reads them, per second.
const LINE_COUNTS_PER_S: f64 = 1.0;

/// What the model needs from the two runs.
pub struct Inputs {
    /// Intents per second of the sale modelled.
    pub rate: f64,
    /// Claim loops per worker task.
    pub loops: usize,
    /// Hot-seat partition keys (`event#seat`), the only keys allowed over the line.
    pub hot_keys: Vec<String>,
    /// Run 1 (the full-size event): units by (label, key), and its intents.
    pub keys: HashMap<(String, String), Usage>,
    /// Intents of run 1.
    pub key_intents: f64,
    /// Run 2 (a whole sale): units, DynamoDB requests, requests by operation, intents, CPU.
    pub sale: HashMap<(String, String), Usage>,
    /// DynamoDB requests of run 2.
    pub sale_dynamodb_requests: f64,
    /// Requests by `Service.Operation` of run 2.
    pub sale_counts: BTreeMap<String, usize>,
    /// Events published in run 2.
    pub sale_events: f64,
    /// Intents of run 2.
    pub sale_intents: f64,
    /// CPU seconds per intent of the API's and the worker's share, from run 2.
    pub api_cpu: f64,
    /// See `api_cpu`.
    pub worker_cpu: f64,
}

fn busiest(inputs: &Inputs) -> Value {
    key_rows(
        &inputs.keys,
        inputs.key_intents,
        inputs.rate,
        &inputs.hot_keys,
    )
}

/// The busiest key of each table and index when `intents` intents, which booked `keys`, come at
/// `rate` a second (the hot seats' keys left out).
pub fn key_rows(
    keys: &HashMap<(String, String), Usage>,
    intents: f64,
    rate: f64,
    hot_keys: &[String],
) -> Value {
    let per_second = rate / intents;
    let mut by_label: BTreeMap<&str, (f64, String, f64, String)> = BTreeMap::new();
    for ((label, key), usage) in keys {
        if hot_keys.contains(key) {
            continue;
        }
        let entry = by_label
            .entry(label)
            .or_insert((0.0, String::new(), 0.0, String::new()));
        if usage.writes > entry.0 && !key.starts_with(LINE_COUNTS_KEY) {
            (entry.0, entry.1) = (usage.writes, key.clone());
        }
        if usage.reads > entry.2 {
            (entry.2, entry.3) = (usage.reads, key.clone());
        }
    }
    by_label
        .into_iter()
        .map(|(label, (writes, write_key, reads, read_key))| {
            let (w, r) = (writes * per_second, reads * per_second);
            json!({
                "table_or_index": label,
                "busiest_write_key": write_key, "writes_per_s": w, "write_share": w / PARTITION_WCU,
                "busiest_read_key": read_key, "reads_per_s": r, "read_share": r / PARTITION_RCU,
            })
        })
        .collect()
}

/// The counts item of a sale's line: one addition a second from every process, and one
/// read a second from every API process (eventually consistent, half a unit).
fn line_counts(api_tasks: f64, worker_tasks: f64) -> Value {
    let writes = (api_tasks + worker_tasks) * LINE_COUNTS_PER_S;
    let reads = api_tasks * LINE_COUNTS_PER_S * 0.5;
    json!({"processes": api_tasks + worker_tasks,
           "writes_per_s": writes, "write_share": writes / PARTITION_WCU,
           "reads_per_s": reads, "read_share": reads / PARTITION_RCU})
}

fn hot_seats(inputs: &Inputs) -> Value {
    let per_second = inputs.rate / inputs.key_intents;
    let (mut reads, mut writes) = (0.0_f64, 0.0_f64);
    for ((_, key), usage) in &inputs.keys {
        if inputs.hot_keys.contains(key) {
            reads = reads.max(usage.reads * per_second);
            writes = writes.max(usage.writes * per_second);
        }
    }
    json!({"reads_per_s": reads, "read_share": reads / PARTITION_RCU,
           "writes_per_s": writes, "write_share": writes / PARTITION_WCU})
}

/// Units per intent by table or index.
fn by_table(units: &HashMap<(String, String), Usage>, intents: f64) -> Value {
    let mut totals: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for ((label, _), usage) in units {
        let entry = totals.entry(label).or_default();
        entry.0 += usage.reads;
        entry.1 += usage.writes;
    }
    totals
        .into_iter()
        .map(|(label, (reads, writes))| {
            (
                label.to_owned(),
                json!({"read_units": reads / intents, "write_units": writes / intents}),
            )
        })
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

fn total(units: &HashMap<(String, String), Usage>) -> (f64, f64) {
    units.values().fold((0.0, 0.0), |(r, w), usage| {
        (r + usage.reads, w + usage.writes)
    })
}

/// The report, as JSON.
pub fn report(inputs: &Inputs) -> Value {
    let n = inputs.sale_intents;
    let (rru, wru) = total(&inputs.sale);
    let count = |prefix: &str| -> f64 {
        inputs
            .sale_counts
            .iter()
            .filter(|(op, _)| op.starts_with(prefix))
            .map(|(_, c)| *c as f64)
            .sum()
    };
    let (sqs, put_events) = (count("SQS."), count("EventBridge.PutEvents"));
    let api_tasks = (inputs.rate * inputs.api_cpu / CPU_TARGET).ceil().max(2.0);
    let worker_cpu_tasks = (inputs.rate * inputs.worker_cpu / CPU_TARGET).ceil();
    let worker_latency_tasks =
        (inputs.rate / (inputs.loops as f64 * LOOP_INTENTS_PER_SECOND)).ceil();
    let worker_tasks = worker_cpu_tasks.max(worker_latency_tasks);
    let million_seconds = 1e6 / inputs.rate;
    let task_hour = price::VCPU_HOUR + 2.0 * price::GB_HOUR;
    let dollars = json!({
        "dynamodb_writes": wru / n * 1e6 * price::WRU,
        "dynamodb_reads": rru / n * 1e6 * price::RRU,
        "sqs": sqs / n * 1e6 * price::SQS_REQUEST,
        "eventbridge": inputs.sale_events / n * 1e6 * price::EVENT,
        "fargate": (api_tasks + worker_tasks) * million_seconds / 3600.0 * task_hour,
    });
    let sum: f64 = dollars
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_f64())
        .sum();
    json!({
        "rate_intents_per_s": inputs.rate,
        "partition_keys": busiest(inputs),
        "hot_seat": hot_seats(inputs),
        "line_counts": line_counts(api_tasks, worker_tasks),
        "per_reservation": {
            "dynamodb_requests": inputs.sale_dynamodb_requests / n,
            "dynamodb_requests_by_operation": inputs
                .sale_counts
                .iter()
                .filter_map(|(op, count)| {
                    let op = op.strip_prefix("DynamoDB.")?;
                    Some((op.to_owned(), json!(*count as f64 / n)))
                })
                .collect::<serde_json::Map<_, _>>(),
            "write_units": wru / n, "read_units": rru / n,
            "sqs_requests": sqs / n, "put_events_requests": put_events / n,
            "events": inputs.sale_events / n,
            "by_table": by_table(&inputs.sale, n),
        },
        "quotas": {
            "sqs_requests_per_s": sqs / n * inputs.rate,
            "sqs_in_flight": worker_tasks * inputs.loops as f64 * 10.0, "sqs_in_flight_quota": SQS_IN_FLIGHT_QUOTA,
            "put_events_per_s": put_events / n * inputs.rate, "put_events_quota": PUT_EVENTS_QUOTA,
        },
        "tasks": {
            "vcpu_per_task": 1, "claim_loops": inputs.loops,
            "api": api_tasks, "worker": worker_tasks,
            "worker_by_cpu": worker_cpu_tasks, "worker_by_latency": worker_latency_tasks,
            "api_cpu_ms_per_intent": inputs.api_cpu * 1e3, "worker_cpu_ms_per_intent": inputs.worker_cpu * 1e3,
        },
        "dollars_per_million_reservations": dollars,
        "dollars_per_million_total": sum,
    })
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// The report as the Markdown tables of `docs/capacity.md`.
pub fn markdown(report: &Value) -> String {
    let mut out = key_table(&report["partition_keys"]);
    out.push_str(&rest_markdown(report));
    out
}

/// The table of [`key_rows`].
pub fn key_table(rows: &Value) -> String {
    let mut out = String::from(
        "| table or index | busiest key (writes) | writes/s | of 1,000 WCU | busiest key (reads) | reads/s | of 3,000 RCU |\n|---|---|---|---|---|---|---|\n",
    );
    for row in rows.as_array().into_iter().flatten() {
        out.push_str(&format!(
            "| `{}` | `{}` | {:.0} | {:.0}% | `{}` | {:.0} | {:.0}% |\n",
            row["table_or_index"].as_str().unwrap_or_default(),
            row["busiest_write_key"].as_str().unwrap_or_default(),
            number(&row["writes_per_s"]),
            100.0 * number(&row["write_share"]),
            row["busiest_read_key"].as_str().unwrap_or_default(),
            number(&row["reads_per_s"]),
            100.0 * number(&row["read_share"]),
        ));
    }
    out
}

fn rest_markdown(report: &Value) -> String {
    let mut out = String::new();
    let hot = &report["hot_seat"];
    out.push_str(&format!(
        "\nHot seat item: {:.0} reads/s ({:.0}% of 3,000 RCU), {:.1} writes/s.\n",
        number(&hot["reads_per_s"]),
        100.0 * number(&hot["read_share"]),
        number(&hot["writes_per_s"]),
    ));
    let line = &report["line_counts"];
    out.push_str(&format!(
        "\nA sale's line counts (its counts item, queue positions): {:.0} writes/s ({:.0}% of 1,000 \
         WCU), one a second from each of {:.0} processes; {:.0} reads/s ({:.1}% of 3,000 RCU).\n",
        number(&line["writes_per_s"]),
        100.0 * number(&line["write_share"]),
        number(&line["processes"]),
        number(&line["reads_per_s"]),
        100.0 * number(&line["read_share"]),
    ));
    out.push_str(&format!(
        "\n```json\n{}\n```\n",
        serde_json::to_string_pretty(&json!({
            "per_reservation": report["per_reservation"],
            "quotas": report["quotas"],
            "tasks": report["tasks"],
            "dollars_per_million_reservations": report["dollars_per_million_reservations"],
            "dollars_per_million_total": report["dollars_per_million_total"],
        }))
        .unwrap_or_default()
    ));
    out
}
