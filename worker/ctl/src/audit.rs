//! `seatclaimctl audit [EVENT] [--events FILE]`: prints `app::audit_event`'s report of an event
//! as stored, and the seats a log of published reservation events sold to two jobs; exits 1 on a
//! violation.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use seatclaim_core::Backend;
use seatclaim_core::app::audit_event;
use seatclaim_core::codec::decode_log_line;
use seatclaim_core::domain::{AuditLimits, EventId, ReservationEvent, sold_twice};
use serde_json::json;

use super::{emit, parse_duration};

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").required(true).multiple(true).args(["event_id", "events"]))]
pub(super) struct AuditArgs {
    /// The event to audit as stored.
    event_id: Option<String>,
    /// A log of published reservation events (`events.jsonl`, one envelope per line, or the event
    /// bus's events exported so): reports every seat it sells to two jobs.
    #[arg(long, value_name = "FILE")]
    events: Option<std::path::PathBuf>,
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
    let mut json = json!({});
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    if let Some(event_id) = &args.event_id {
        let event_id = EventId::parse(event_id).context("not an event id")?;
        let limits = AuditLimits {
            max_pending: args.max_pending,
            max_outbox_lag: args.max_outbox_lag,
            opens_at: None,
        };
        let Some(report) = audit_event(backend, &event_id, limits).await? else {
            bail!("no event {event_id}");
        };
        json["event_id"] = json!(event_id);
        json["seats"] = json!(report.seats);
        json["jobs"] = json!(report.jobs);
        lines.push(format!(
            "event {event_id}: {} seats, jobs {:?}",
            report.seats, report.jobs
        ));
        problems.extend(report.violations.iter().map(ToString::to_string));
    }
    if let Some(log) = &args.events {
        let events = read_log(log)?;
        json["log"] = json!({"file": log, "events": events.len()});
        lines.push(format!("{}: {} events", log.display(), events.len()));
        problems.extend(sold_twice(&events).iter().map(ToString::to_string));
    }
    json["ok"] = json!(problems.is_empty());
    json["violations"] = json!(problems);
    emit(args.json, &json, || {
        if problems.is_empty() {
            lines.push("audit passed".into());
        }
        lines.extend(
            problems
                .iter()
                .map(|problem| format!("VIOLATION: {problem}")),
        );
        lines.join("\n")
    });
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Every job's event of the log at `path`, in its order (unmatched payments are not a job's).
fn read_log(path: &std::path::Path) -> anyhow::Result<Vec<ReservationEvent>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut events = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event = decode_log_line(line).with_context(|| {
            format!("{} line {}: not a reservation event", path.display(), n + 1)
        })?;
        events.extend(event);
    }
    Ok(events)
}
