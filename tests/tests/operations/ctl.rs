//! `seatclaimctl init` and `migrate` as operators run them: the real binary, twice (both must
//! be idempotent).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use seatclaim_runtime::backend;
use std::process::Command;

use seatclaim_e2e::binary;
use seatclaim_e2e::emulator::{emulator_config, fresh_settings};
use seatclaim_runtime::config::BackendSettings;

fn init(env: &[(&str, String)]) -> String {
    ctl("init", env)
}

fn ctl(command: &str, env: &[(&str, String)]) -> String {
    let output = Command::new(binary("seatclaimctl"))
        .arg(command)
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{command} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn init_creates_the_embedded_database_and_can_run_again() {
    let data = tempfile::tempdir().unwrap();
    let env = [("SEATCLAIM_DATA_DIR", data.path().display().to_string())];
    init(&env);
    assert!(data.path().join("seatclaim.sqlite3").exists());
    assert!(init(&env).starts_with("ready: embedded backend"));
}

#[tokio::test]
async fn init_creates_the_aws_resources_for_a_prefix_and_can_run_again() {
    let config = emulator_config().await;
    let prefix = fresh_settings().aws_prefix;
    let env = [
        ("SEATCLAIM_BACKEND", "aws".to_owned()),
        ("SEATCLAIM_AWS_PREFIX", prefix.clone()),
    ];
    init(&env);
    let again = init(&env);
    assert!(again.contains(&format!("{prefix}-intents")), "{again}");
    let sqs = aws_sdk_sqs::Client::new(&config);
    let url = sqs
        .get_queue_url()
        .queue_name(format!("{prefix}-intents"))
        .send()
        .await
        .unwrap();
    let redrive = sqs
        .get_queue_attributes()
        .queue_url(url.queue_url().unwrap())
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::RedrivePolicy)
        .send()
        .await
        .unwrap();
    let policy = redrive.attributes().unwrap()
        [&aws_sdk_sqs::types::QueueAttributeName::RedrivePolicy]
        .clone();
    let policy: serde_json::Value = serde_json::from_str(&policy).unwrap();
    assert!(
        policy["deadLetterTargetArn"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{prefix}-intents-dlq"))
    );
    assert_eq!(
        policy["maxReceiveCount"].to_string().trim_matches('"'),
        "6",
        "attempts (5) + 1"
    );
    let dynamodb = aws_sdk_dynamodb::Client::new(&config);
    for table in ["events", "inventory", "reservation-jobs", "event-outbox"] {
        let described = dynamodb
            .describe_table()
            .table_name(format!("{prefix}-{table}"))
            .send()
            .await;
        assert!(described.is_ok(), "table {table} exists");
    }
    let legacy = dynamodb
        .describe_table()
        .table_name(format!("{prefix}-idempotency"))
        .send()
        .await;
    assert!(
        legacy.is_err(),
        "a job item is its key's record: no idempotency table"
    );
}

#[tokio::test]
async fn migrate_on_a_deployment_without_old_tables_copies_nothing_and_can_run_again() {
    emulator_config().await;
    let prefix = fresh_settings().aws_prefix;
    let env = [
        ("SEATCLAIM_BACKEND", "aws".to_owned()),
        ("SEATCLAIM_AWS_PREFIX", prefix.clone()),
    ];
    for _ in 0..2 {
        let said = ctl("migrate", &env);
        assert!(
            said.starts_with("schema version 4: copied 0 seats")
                && said.contains("indexed 0 access codes"),
            "{said}"
        );
    }
    let data = tempfile::tempdir().unwrap();
    let embedded = [("SEATCLAIM_DATA_DIR", data.path().display().to_string())];
    assert!(ctl("migrate", &embedded).starts_with("ready: embedded backend"));
}

/// `seatclaimctl audit --events FILE` passes a log of published reservation events that sells
/// each seat once, and reports (exit 1) a seat it sells to a second job, as a restore of an older
/// backup can make happen.
#[test]
fn an_audit_of_an_events_log_reports_a_seat_sold_to_two_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let sold = |job: &str, seat: &str| {
        serde_json::json!({
            "source": "seatclaim.reservations", "detail-type": "Reservation Sold",
            "detail": {"status": "SOLD", "job_id": job, "event_id": "e1", "buyer_id": "b1",
                       "seat_ids": [seat], "hold_expires_at": null, "reason": null,
                       "occurred_at": "2026-12-01T10:00:00Z"}
        })
        .to_string()
    };
    let (first, second) = (
        "018f6e2a-0000-7000-8000-000000000001",
        "018f6e2a-0000-7000-8000-000000000002",
    );
    let log = dir.path().join("events.jsonl");
    let audit = |lines: &[String]| {
        std::fs::write(&log, lines.join("\n") + "\n").unwrap();
        let output = Command::new(binary("seatclaimctl"))
            .args(["audit", "--json", "--events"])
            .arg(&log)
            .env("SEATCLAIM_DATA_DIR", dir.path())
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
        (output.status.success(), report)
    };
    let (passed, report) = audit(&[sold(first, "A-1-1"), sold(second, "A-1-2")]);
    assert!(passed, "{report}");
    assert_eq!(report["log"]["events"], 2);
    let (passed, report) = audit(&[
        sold(first, "A-1-1"),
        sold(second, "A-1-2"),
        sold(second, "A-1-1"),
    ]);
    assert!(!passed, "{report}");
    let violations = report["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1, "{report}");
    let said = violations[0].as_str().unwrap();
    assert!(
        said.contains("A-1-1") && said.contains(first) && said.contains(second),
        "{said}"
    );
}

/// Runs `seatclaimctl` with `args` on the embedded folder `data`; its standard output.
fn ctl_in(data: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new(binary("seatclaimctl"))
        .args(args)
        .env("SEATCLAIM_DATA_DIR", data)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn events_show_prints_the_opening_and_after_it_the_draw() {
    let data = tempfile::tempdir().unwrap();
    let spec = data.path().join("event.json");
    std::fs::write(
        &spec,
        r#"{"event_id": "op", "name": "Opening", "sale_starts_at": "2020-01-01T00:00:00Z",
            "channels": [{"name": "fanclub", "sale_starts_at": "2019-12-31T00:00:00Z"}],
            "sections": [{"section": "S", "rows": 1, "seats_per_row": 2},
                         {"section": "F", "rows": 1, "seats_per_row": 2, "channel": "fanclub"}]}"#,
    )
    .unwrap();
    ctl_in(
        data.path(),
        &["events", "create", "--file", spec.to_str().unwrap()],
    );
    let before = ctl_in(data.path(), &["events", "show", "op"]);
    assert!(
        before.contains("sale starts at 2020-01-01T00:00:00Z; 0 intents wait"),
        "{before}"
    );
    assert!(
        before.contains("channel fanclub's sale starts at 2019-12-31T00:00:00Z; 0 intents wait"),
        "{before}"
    );

    // The first receive after the start draws the opening.
    let settings = BackendSettings::in_folder(data.path().to_owned());
    let backend = seatclaim_e2e::running(backend::open(&settings).await.unwrap());
    let received = backend
        .queue
        .receive(10, std::time::Duration::ZERO)
        .await
        .unwrap();
    assert!(received.is_empty(), "nobody was pre-queued");
    drop(backend);
    let after: serde_json::Value =
        serde_json::from_str(&ctl_in(data.path(), &["events", "show", "op", "--json"])).unwrap();
    assert_eq!(after["sale_starts_at"], "2020-01-01T00:00:00Z");
    assert_eq!(after["prequeued"], 0);
    assert_eq!(
        after["max_seats_per_buyer"], 10,
        "an event created without a limit gets SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER's default"
    );
    assert_eq!(after["seed"].as_str().unwrap().len(), 64, "{after}");
    assert_eq!(after["digest"].as_str().unwrap().len(), 64, "{after}");
    let channel = &after["channel_openings"][0];
    assert_eq!(channel["channel"], "fanclub", "{after}");
    assert_eq!(channel["sale_starts_at"], "2019-12-31T00:00:00Z", "{after}");
    assert_ne!(channel["seed"], after["seed"], "a draw of its own: {after}");
    let text = ctl_in(data.path(), &["events", "show", "op"]);
    assert!(text.contains("seed") && text.contains("digest"), "{text}");
}
