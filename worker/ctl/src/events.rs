//! `seatclaimctl events create`: an operator creates an event from the same JSON body that
//! `POST /v1/events` takes. A stack runs it under the operator's role, so that the API's role
//! needs no right to write new seats (`SEATCLAIM_API_CREATES_EVENTS=false`). `seatclaimctl
//! events close-waitlist ID` ends an event's waitlist, as `POST /v1/events/{id}/waitlist/close`;
//! `seatclaimctl events show ID` shows an event's terms and its opening (the draw, once made).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use seatclaim_core::Backend;
use seatclaim_core::domain::{EventId, EventSpec, NewEvent};
use seatclaim_core::ports::{EventCreation, Opening};
use seatclaim_runtime::cli::EventDefaultsArgs;
use serde_json::json;

use super::emit;

#[derive(Debug, Subcommand)]
pub(super) enum EventsCommand {
    /// Creates an event and all its seats, AVAILABLE; exits 1 if the event already exists.
    Create {
        /// The event as JSON, as `POST /v1/events` takes it; `-` reads standard input.
        #[arg(long)]
        file: PathBuf,
        /// What the event gets where the body names nothing, as through the API.
        #[command(flatten)]
        defaults: EventDefaultsArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Shows an event: its terms and, for a sale with a start, the opening time, how many
    /// intents wait in (or were drawn from) its pre-queue and, once drawn, the draw's seed and
    /// digest; exits 1 if there is no such event.
    Show {
        /// The event.
        event_id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Closes an event's waitlist: every WAITLISTED job is REJECTED ("waitlist closed"), and the
    /// event behaves as one without a waitlist; exits 1 if there is no such event.
    CloseWaitlist {
        /// The event.
        event_id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(super) async fn run(backend: &Backend, command: EventsCommand) -> anyhow::Result<ExitCode> {
    match command {
        EventsCommand::Create {
            file,
            defaults,
            json,
        } => create(backend, &file, defaults, json).await,
        EventsCommand::Show { event_id, json } => show(backend, &event_id, json).await,
        EventsCommand::CloseWaitlist { event_id, json } => {
            close_waitlist(backend, &event_id, json).await
        }
    }
}

async fn close_waitlist(backend: &Backend, raw: &str, json: bool) -> anyhow::Result<ExitCode> {
    let event_id = EventId::parse(raw).context("not an event id")?;
    let Some(rejected) = backend.inventory.close_waitlist(&event_id).await? else {
        eprintln!("event {event_id} does not exist");
        return Ok(ExitCode::from(1));
    };
    let value = json!({"event_id": event_id, "rejected": rejected});
    emit(json, &value, || {
        format!("closed the waitlist of event {event_id}: {rejected} waiting jobs rejected")
    });
    Ok(ExitCode::SUCCESS)
}

async fn show(backend: &Backend, raw: &str, json: bool) -> anyhow::Result<ExitCode> {
    let event_id = EventId::parse(raw).context("not an event id")?;
    let events = backend.catalog.events().await?;
    let Some(info) = events.iter().find(|info| info.event_id == event_id) else {
        eprintln!("event {event_id} does not exist");
        return Ok(ExitCode::from(1));
    };
    let opening = backend.catalog.opening(&event_id, None).await?;
    let mut channels = Vec::new();
    for channel in &info.channels.channels {
        let name = &channel.name;
        if let Some(own) = backend.catalog.opening(&event_id, Some(name)).await? {
            channels.push((name, own));
        }
    }
    let mut value = opening_json(opening.as_ref());
    value["event_id"] = json!(event_id);
    value["name"] = json!(info.name);
    value["hold_seconds"] = json!(info.hold.as_secs());
    value["max_seats_per_buyer"] = json!(info.max_seats_per_buyer.map(|limit| limit.seats()));
    value["sale_starts_at"] = json!(info.sale_starts_at);
    let channel_openings = channels.iter().map(|(name, own)| {
        let mut value = opening_json(Some(own));
        value["channel"] = json!(name);
        value["sale_starts_at"] = json!(own.sale_starts_at);
        value
    });
    value["channel_openings"] = json!(channel_openings.collect::<Vec<_>>());
    emit(json, &value, || {
        let mut text = format!(
            "event {event_id} ({}): holds last {} s",
            info.name,
            info.hold.as_secs()
        );
        text.push_str(&opening_text("sale", opening.as_ref()));
        for (name, own) in &channels {
            text.push_str(&opening_text(&format!("channel {name}'s sale"), Some(own)));
        }
        text
    });
    Ok(ExitCode::SUCCESS)
}

/// An opening's fields for `--json`: how many wait, and the draw once made.
fn opening_json(opening: Option<&Opening>) -> serde_json::Value {
    let draw = opening.and_then(|opening| opening.draw.as_ref());
    json!({
        "prequeued": opening.map(|opening| opening.prequeued),
        "opened_at": draw.map(|draw| draw.occurred_at),
        "seed": draw.map(|draw| &draw.seed),
        "digest": draw.map(|draw| &draw.digest),
    })
}

/// An opening in words: `what` (the sale, or a channel's) opens at its start, and its draw.
fn opening_text(what: &str, opening: Option<&Opening>) -> String {
    match (opening, opening.and_then(|opening| opening.draw.as_ref())) {
        (None, _) => format!("\n{what} open from the start"),
        (Some(opening), None) => format!(
            "\n{what} starts at {}; {} intents wait in the pre-queue (not drawn yet)",
            opening.sale_starts_at, opening.prequeued
        ),
        (Some(opening), Some(draw)) => format!(
            "\n{what} started at {}; opened at {}: {} pre-queued intents drawn\nseed   {}\ndigest {}",
            opening.sale_starts_at, draw.occurred_at, draw.shuffled, draw.seed, draw.digest
        ),
    }
}

async fn create(
    backend: &Backend,
    file: &PathBuf,
    defaults: EventDefaultsArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let text = read(file)?;
    let spec: EventSpec = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an event body", file.display()))?;
    let event = NewEvent::parse(spec.with_default_limit(defaults.seat_limit()))
        .context("the event is not valid")?;
    match backend.catalog.create_event(&event).await? {
        EventCreation::Created(seats) => {
            let value = json!({"event_id": event.event_id, "seats": seats});
            emit(json, &value, || {
                format!("created event {} with {seats} seats", event.event_id)
            });
            Ok(ExitCode::SUCCESS)
        }
        EventCreation::AlreadyExists => {
            eprintln!("event {} already exists", event.event_id);
            Ok(ExitCode::from(1))
        }
    }
}

fn read(file: &PathBuf) -> anyhow::Result<String> {
    if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the event from standard input")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}
