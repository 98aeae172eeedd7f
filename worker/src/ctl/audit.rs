//! `seatclaimctl audit EVENT`: the invariants, checked over what the backend stores.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{AuditLimits, EventId, audit};
use serde_json::json;

use super::{emit, parse_duration};

#[derive(Debug, Args)]
pub(super) struct AuditArgs {
    /// The event to audit.
    event_id: String,
    /// A job PENDING longer than this is reported.
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    max_pending: jiff::SignedDuration,
    /// An unpublished event older than this is reported.
    #[arg(long, value_parser = parse_duration, default_value = "1m")]
    max_outbox_lag: jiff::SignedDuration,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(super) async fn run(backend: &Backend, args: AuditArgs) -> anyhow::Result<ExitCode> {
    let event_id = EventId::parse(&args.event_id).context("not an event id")?;
    let Some(seats) = backend.catalog.seat_map(&event_id).await? else {
        bail!("no event {event_id}");
    };
    let jobs = backend.jobs.of_event(&event_id).await?;
    let oldest_unpublished = backend
        .outbox
        .unpublished(1)
        .await?
        .first()
        .map(|entry| entry.event.occurred_at);
    let now = backend.clock.now();
    let limits = AuditLimits {
        max_pending: args.max_pending,
        max_outbox_lag: args.max_outbox_lag,
    };
    let violations = audit(&seats, &jobs, oldest_unpublished, now, limits);
    let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
    for job in &jobs {
        *statuses.entry(job.status.as_str()).or_default() += 1;
    }
    let problems: Vec<String> = violations.iter().map(ToString::to_string).collect();
    let report = json!({
        "event_id": event_id,
        "ok": problems.is_empty(),
        "seats": seats.len(),
        "jobs": statuses,
        "violations": problems,
    });
    emit(args.json, &report, || {
        let mut text = format!("event {event_id}: {} seats, jobs {statuses:?}", seats.len());
        if problems.is_empty() {
            text.push_str("\naudit passed");
        }
        for problem in &problems {
            text.push_str(&format!("\nVIOLATION: {problem}"));
        }
        text
    });
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
