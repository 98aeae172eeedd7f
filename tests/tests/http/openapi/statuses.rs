//! Every status the routes answer, each driven over HTTP and looked up in the document the app
//! serves: the operation documents the status, and an error is a problem whose `type` the
//! document lists for that status. From the other side, every status and problem type
//! `ApiError` can produce is documented for some operation.

use axum::http::{Method, StatusCode};
use seatclaim_api::{ProblemType, ServerLimits};
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, Call, Reply, TestApp, assert_problem};
use serde_json::{Value, json};

use super::document::{fetch, operation, responses};
use super::{SECRET, authenticated_app};

mod cases;
mod payments;

/// An app and the document it serves, to send probes to.
pub struct Expect<'a> {
    app: &'a TestApp,
    document: Value,
}

impl<'a> Expect<'a> {
    async fn new(app: &'a TestApp) -> Self {
        let document = fetch(app).await;
        Self { app, document }
    }

    /// A request to the operation at `method` and `template`, sent to `path`.
    fn to(&self, method: Method, template: &str, path: &str) -> Probe<'_> {
        self.sent_as(method.clone(), method, template, path)
    }

    /// A request sent with method `sent` to `path`, answered as the operation at `method` and
    /// `template` documents (a method the path does not take is every operation's 405).
    fn sent_as(&self, sent: Method, method: Method, template: &str, path: &str) -> Probe<'_> {
        Probe {
            call: self.app.request(sent, path),
            method,
            template: template.to_owned(),
            document: &self.document,
        }
    }
}

/// A request being built, with the operation it is for.
pub struct Probe<'a> {
    call: Call<'a>,
    method: Method,
    template: String,
    document: &'a Value,
}

impl<'a> Probe<'a> {
    fn header(mut self, name: &str, value: &str) -> Self {
        self.call = self.call.header(name, value);
        self
    }

    fn json(mut self, body: &Value) -> Self {
        self.call = self.call.json(body);
        self
    }

    fn body(mut self, body: impl Into<axum::body::Bytes>) -> Self {
        self.call = self.call.body(body);
        self
    }

    /// Sends the request, and checks that it gets `expect` and that the document has it.
    async fn answers(self, expect: StatusCode) -> Reply {
        let (reply, check) = self.send().await;
        assert_eq!(reply.status, expect, "{check}: {}", reply.text());
        check.documents(&reply);
        reply
    }

    /// Sends the request; the check of its reply against the document comes with it.
    async fn send(self) -> (Reply, Check<'a>) {
        let reply = self.call.send().await;
        let check = Check {
            method: self.method,
            template: self.template,
            document: self.document,
        };
        (reply, check)
    }
}

/// What a reply is checked against: its operation in the document.
pub struct Check<'a> {
    method: Method,
    template: String,
    document: &'a Value,
}

impl std::fmt::Display for Check<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.template)
    }
}

impl Check<'_> {
    /// Asserts that the operation documents the reply's status, and for an error, its problem
    /// type.
    fn documents(&self, reply: &Reply) {
        let operation = operation(self.document, &self.method, &self.template);
        let status = reply.status.as_u16().to_string();
        let Some(response) = responses(operation).get(&status) else {
            panic!("{self} answered {status}, which the document does not list for it");
        };
        if reply.status.is_client_error() || reply.status.is_server_error() {
            let problem = assert_problem(reply, reply.status);
            let schema = &response["content"]["application/problem+json"]["schema"];
            let types = schema["allOf"][1]["properties"]["type"]["enum"]
                .as_array()
                .unwrap_or_else(|| panic!("{self} {status}: no problem types in {response}"));
            assert!(
                types.contains(&problem["type"]),
                "{self} {status}: {problem}"
            );
        }
    }
}

#[tokio::test]
async fn every_status_the_routes_answer_is_documented_for_its_operation() {
    let app = TestApp::spawn().await;
    let expect = Expect::new(&app).await;
    cases::events(&expect).await;
    cases::reservations(&expect).await;
    cases::jobs(&expect).await;
    cases::reads(&expect).await;
    cases::other_methods(&expect).await;
    payments::unconfigured(&expect).await;
}

#[tokio::test]
async fn with_stripe_payments_the_402_and_the_webhooks_answers_are_documented() {
    let app = payments::priced_app().await;
    payments::answers(&Expect::new(&app).await).await;
}

#[tokio::test]
async fn a_deployment_whose_operators_create_events_answers_the_documented_403() {
    let app = TestApp::spawn_with(AppOptions {
        creates_events: false,
        ..AppOptions::default()
    })
    .await;
    let expect = Expect::new(&app).await;
    let event =
        json!({"event_id": "e1", "name": "Show", "seats": [{"seat_id": "A-1", "section": "A"}]});
    expect
        .to(Method::POST, "/v1/events", "/v1/events")
        .json(&event)
        .answers(StatusCode::FORBIDDEN)
        .await;
}

#[tokio::test]
async fn with_authentication_on_the_401s_and_403s_are_documented() {
    let app = authenticated_app().await;
    let expect = Expect::new(&app).await;
    let buyer = format!("Bearer {}", hs256_token(SECRET, &claims("b1", &json!({}))));
    let event = json!({"event_id": "e1", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 4}]});
    for (method, template) in [
        (Method::POST, "/v1/events"),
        (Method::POST, "/v1/events/{event_id}/reservations"),
        (Method::GET, "/v1/jobs/{job_id}"),
        (Method::POST, "/v1/jobs/{job_id}/confirm"),
        (Method::POST, "/v1/jobs/{job_id}/cancel"),
        (Method::POST, "/v1/jobs/{job_id}/extend"),
        (Method::POST, "/v1/events/{event_id}/waitlist/close"),
    ] {
        let path = super::concrete(template);
        let reply = expect
            .to(method, template, &path)
            .answers(StatusCode::UNAUTHORIZED)
            .await;
        assert!(reply.header("www-authenticate").starts_with("Bearer "));
    }
    let reply = expect
        .to(Method::POST, "/v1/events", "/v1/events")
        .header("Authorization", &buyer)
        .json(&event)
        .answers(StatusCode::FORBIDDEN)
        .await;
    assert!(
        reply
            .header("www-authenticate")
            .contains("insufficient_scope")
    );
    let admin = hs256_token(SECRET, &claims("ops", &json!({"scope": "seatclaim/admin"})));
    expect
        .to(Method::POST, "/v1/events", "/v1/events")
        .header("Authorization", &format!("Bearer {admin}"))
        .json(&event)
        .answers(StatusCode::CREATED)
        .await;
    let close = "/v1/events/{event_id}/waitlist/close";
    expect
        .to(Method::POST, close, "/v1/events/e1/waitlist/close")
        .header("Authorization", &buyer)
        .answers(StatusCode::FORBIDDEN)
        .await;
    let template = "/v1/events/{event_id}/reservations";
    expect
        .to(Method::POST, template, "/v1/events/e1/reservations")
        .header("Authorization", &buyer)
        .header("Idempotency-Key", "k1")
        .json(&json!({"buyer_id": "someone-else", "seat_ids": ["A-1-1"]}))
        .answers(StatusCode::FORBIDDEN)
        .await;
}

#[tokio::test]
async fn a_request_past_the_timeout_answers_the_documented_503() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        limits: ServerLimits {
            request_timeout_secs: 1,
            ..ServerLimits::default()
        },
        ..AppOptions::default()
    })
    .await;
    if app.address().is_none() {
        return; // in-process, the router runs without the server's bounds
    }
    app.create_grid("e1", 1, 4, 300).await;
    let job = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    let expect = Expect::new(&app).await;
    let reply = expect
        .to(
            Method::GET,
            "/v1/jobs/{job_id}",
            &format!("/v1/jobs/{job}?wait=10"),
        )
        .answers(StatusCode::SERVICE_UNAVAILABLE)
        .await;
    assert_eq!(reply.header("retry-after"), "1");
}

#[test]
fn every_status_and_problem_type_the_errors_have_is_documented_somewhere() {
    let document = seatclaim_api::openapi::document(true);
    let documented: Vec<(String, Value)> = super::operations(&document)
        .into_iter()
        .flat_map(|(_, _, operation)| responses(operation).clone())
        .collect();
    for kind in ProblemType::ALL.iter().copied() {
        for status in kind.statuses() {
            let urn = Value::from(kind.urn());
            let found = documented.iter().any(|(code, response)| {
                *code == status.to_string()
                    && response["content"]["application/problem+json"]["schema"]["allOf"][1]
                        ["properties"]["type"]["enum"]
                        .as_array()
                        .is_some_and(|types| types.contains(&urn))
            });
            assert!(found, "no operation documents {status} {urn}");
        }
    }
}
