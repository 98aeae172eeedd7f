//! Presale channels and access codes over HTTP: an event's channels in the list and the seat
//! map, codes created (listed or generated, returned once), refused as the contract says, used
//! by a reservation, shown and revoked; a channel's seats refused to a public buyer; the code
//! never in a job's body.

use axum::http::{Method, StatusCode};
use seatclaim_e2e::{TestApp, assert_problem};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Creates event `pre`: section F (10 seats) for channel `fanclub`, public section A.
async fn presale(app: &TestApp) {
    let created = app
        .create_event(&json!({"event_id": "pre", "name": "Presale",
            "channels": [{"name": "fanclub", "release_at": "2099-01-01T00:00:00Z"}],
            "sections": [
                {"section": "F", "rows": 1, "seats_per_row": 10, "channel": "fanclub"},
                {"section": "A", "rows": 1, "seats_per_row": 10}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
}

async fn create_codes(app: &TestApp, body: &Value) -> seatclaim_e2e::Reply {
    app.request(Method::POST, "/v1/events/pre/codes")
        .json(body)
        .send()
        .await
}

fn reservation(buyer: &str, section: &str, code: Option<&str>) -> Value {
    let mut body = json!({"buyer_id": buyer, "section": section, "quantity": 1});
    if let Some(code) = code {
        body["access_code"] = json!(code);
    }
    body
}

#[tokio::test]
async fn codes_are_created_once_and_refused_as_the_contract_says() {
    let app = TestApp::spawn().await;
    presale(&app).await;
    let (_, list) = app.get("/v1/events").await;
    let channel = &list["events"][0]["channels"][0];
    assert_eq!(channel["name"], "fanclub", "{list}");
    assert_eq!(
        (channel["seats"].clone(), channel["sections"].clone()),
        (json!(10), json!(["F"]))
    );
    let generated = create_codes(
        &app,
        &json!({"channel": "fanclub", "generate": 3, "max_seats": 2}),
    )
    .await;
    assert_eq!(
        generated.status,
        StatusCode::CREATED,
        "{}",
        generated.text()
    );
    let codes = generated.json()["codes"].as_array().unwrap().clone();
    assert_eq!(codes.len(), 3);
    let listed = json!({"channel": "fanclub", "codes": ["FAN-7Q2X"], "max_seats": 4});
    assert_eq!(
        create_codes(&app, &listed).await.status,
        StatusCode::CREATED
    );
    let again = assert_problem(&create_codes(&app, &listed).await, StatusCode::CONFLICT);
    assert_eq!(again["reason_code"], "code_exists");
    let stranger = json!({"channel": "partner", "codes": ["PART-1234"], "max_seats": 4});
    let unknown = assert_problem(
        &create_codes(&app, &stranger).await,
        StatusCode::UNPROCESSABLE_ENTITY,
    );
    assert_eq!(unknown["reason_code"], "channel_unknown");
    for bad in [
        json!({"channel": "fanclub", "codes": ["X-1"], "generate": 2, "max_seats": 4}),
        json!({"channel": "fanclub", "codes": ["DUP-1111", "DUP-1111"], "max_seats": 4}),
        json!({"channel": "fanclub", "codes": ["GOOD-1111"], "max_seats": 0}),
        json!({"channel": "fanclub", "codes": ["no spaces allowed"], "max_seats": 4}),
    ] {
        let refused = assert_problem(
            &create_codes(&app, &bad).await,
            StatusCode::UNPROCESSABLE_ENTITY,
        );
        assert_eq!(refused["reason_code"], "invalid_request", "{bad}");
    }
    let missing = app
        .request(Method::POST, "/v1/events/nope/codes")
        .json(&listed)
        .send()
        .await;
    assert_problem(&missing, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_code_admits_to_its_channel_until_revoked_and_stays_out_of_the_job() {
    let app = TestApp::spawn().await;
    presale(&app).await;
    let listed = json!({"channel": "fanclub", "codes": ["FAN-7Q2X"], "max_seats": 4});
    assert_eq!(
        create_codes(&app, &listed).await.status,
        StatusCode::CREATED
    );
    let wrong = app
        .reserve("pre", "k0", &reservation("b0", "F", Some("FAN-NOPE")))
        .await;
    let wrong = assert_problem(&wrong, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(wrong["reason_code"], "access_code_unknown");
    let public = app
        .reserve_ok("pre", "k1", &reservation("b1", "F", None))
        .await;
    let public = app.decided(&public, DECIDED_WITHIN).await;
    assert_eq!(public["reason_code"], "channel_seats", "{public}");
    let fan = app
        .reserve_ok("pre", "k2", &reservation("b2", "F", Some("FAN-7Q2X")))
        .await;
    let fan = app.decided(&fan, DECIDED_WITHIN).await;
    assert_eq!(fan["status"], "HELD", "{fan}");
    assert!(!fan.to_string().contains("7Q2X"), "{fan}");
    let (status, standing) = app.get("/v1/events/pre/codes/FAN-7Q2X").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (standing["held"].clone(), standing["left"].clone()),
        (json!(1), json!(3))
    );
    let map = app.seat_map("pre").await;
    let channel_seats = map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["channel"] == "fanclub");
    assert_eq!(
        channel_seats.count(),
        10,
        "the map names the channel's seats"
    );
    let revoked = app
        .request(Method::DELETE, "/v1/events/pre/codes/FAN-7Q2X")
        .send()
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    let (_, standing) = app.get("/v1/events/pre/codes/FAN-7Q2X").await;
    assert_eq!(standing["revoked"], true);
    let after = app
        .reserve("pre", "k3", &reservation("b3", "F", Some("FAN-7Q2X")))
        .await;
    let after = assert_problem(&after, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(after["reason_code"], "access_code_revoked");
    let (status, _) = app.get("/v1/events/pre/codes/NOT-A-CODE").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
