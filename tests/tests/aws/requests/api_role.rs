//! The API's requests on AWS: its task role writes no seat item, so confirm, cancel and extend
//! are settled by a worker, and the seat map is its only read of the inventory.

use super::*;

/// The JSON body of the answer to `request`.
async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Every DynamoDB table (and index) a request names, with its operation.
#[derive(Default)]
struct Tables(std::sync::Mutex<std::collections::BTreeSet<(String, String)>>);

impl Tables {
    fn take(&self) -> std::collections::BTreeSet<(String, String)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The tables a DynamoDB request body names: `TableName` anywhere (a transaction's entries
/// included), the keys of `RequestItems`, and `/index` after a table for a query of an index.
fn named_tables(body: &serde_json::Value, out: &mut Vec<String>) {
    match body {
        serde_json::Value::Object(fields) => {
            if let Some(table) = fields.get("TableName").and_then(|t| t.as_str()) {
                match fields.get("IndexName").and_then(|i| i.as_str()) {
                    Some(index) => out.push(format!("{table}/{index}")),
                    None => out.push(table.to_owned()),
                }
            }
            if let Some(items) = fields.get("RequestItems").and_then(|r| r.as_object()) {
                out.extend(items.keys().cloned());
            }
            fields.values().for_each(|v| named_tables(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| named_tables(v, out)),
        _ => {}
    }
}

impl seatclaim_e2e::request_log::Observer for Tables {
    fn observe(&self, operation: &str, request: &[u8], _status: u16, _answer: &[u8]) {
        let Ok(body) = serde_json::from_slice::<serde_json::Value>(request) else {
            return;
        };
        let mut tables = Vec::new();
        named_tables(&body, &mut tables);
        let mut seen = self.0.lock().unwrap();
        seen.extend(tables.into_iter().map(|t| (operation.to_owned(), t)));
    }
}

/// The API's task role writes no seat item, and reads none but through the seat map's index: a
/// hold extended and confirmed, and another cancelled, through an API whose every AWS request
/// goes through a proxy that notes the tables it names, while a worker (on its own backend)
/// claims and settles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_settles_through_the_workers_and_touches_no_seat_item() {
    let direct = emulator_config().await;
    let tables = Arc::new(Tables::default());
    let (_log, proxied) = proxy(Some(tables.clone())).await;
    let settings = fresh_settings();
    provision(&direct, &settings, Duration::from_secs(30), 6).await;
    let open = |config, settlements| {
        let settings = seatclaim_aws::AwsSettings {
            settlements,
            ..settings.clone()
        };
        async move {
            seatclaim_e2e::emulator::open(
                config,
                &settings,
                Duration::from_secs(30),
                Arc::new(SystemClock),
            )
            .await
            .unwrap()
        }
    };
    let worker = open(&direct, seatclaim_aws::Settlements::ServedHere).await;
    let base = serve(open(&proxied, seatclaim_aws::Settlements::SentToWorkers).await).await;
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{base}/v1/events"))
        .json(&json!({"event_id": "e1", "name": "n", "hold_extension_seconds": 300,
            "max_hold_extensions": 1, "sections": [{"section": "A", "rows": 1, "seats_per_row": 4}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    tables.take(); // creating an event is the operators' (their role writes seats)

    let mut jobs = Vec::new();
    for seat in ["A-1-1", "A-1-2"] {
        let posted = json_of(
            client
                .post(format!("{base}/v1/events/e1/reservations"))
                .header("Idempotency-Key", seat)
                .json(&json!({"buyer_id": "b1", "seat_ids": [seat]})),
        )
        .await;
        jobs.push(posted["job_id"].as_str().unwrap().to_owned());
    }
    let mut held = 0;
    while held < jobs.len() {
        let deliveries = worker
            .queue
            .receive(10, Duration::from_secs(1))
            .await
            .unwrap();
        held += process_batch(&worker, deliveries, Limits::attempts(5))
            .await
            .held;
    }
    for (job, action, status) in [
        (&jobs[0], "extend", "HELD"),
        (&jobs[0], "confirm", "SOLD"),
        (&jobs[1], "cancel", "CANCELLED"),
    ] {
        let settled = client
            .post(format!("{base}/v1/jobs/{job}/{action}"))
            .send()
            .await
            .unwrap();
        assert_eq!(settled.status(), StatusCode::OK, "{action}");
        let body: serde_json::Value = settled.json().await.unwrap();
        assert_eq!(body["status"], status, "{action}: {body}");
    }
    let map = json_of(client.get(format!("{base}/v1/events/e1/seats"))).await;
    let states: Vec<(&str, &str)> = map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["seat_id"].as_str().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    assert_eq!(&states[..2], [("A-1-1", "SOLD"), ("A-1-2", "AVAILABLE")]);

    let inventory = format!("{}-inventory", settings.aws_prefix);
    let touched: Vec<_> = tables
        .take()
        .into_iter()
        .filter(|(_, table)| table.starts_with(&inventory))
        .collect();
    let by_block = format!("{inventory}/by-block");
    assert!(
        touched
            .iter()
            .all(|(op, table)| op == "DynamoDB.Query" && *table == by_block),
        "the API touched seat items: {touched:?}"
    );
    assert!(
        !touched.is_empty(),
        "the seat map was read through the proxy"
    );
}
