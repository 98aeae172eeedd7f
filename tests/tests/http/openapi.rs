//! The OpenAPI document (`GET /openapi.json`) held to the code: it is OpenAPI 3.1 and lists
//! exactly the routes the router serves (the list both are built from, every entry probed over
//! HTTP, and no route added to the router any other way); every status the routes answer is
//! documented for its operation, with its problem type (`statuses.rs`); and the bearer scheme
//! with the operations that need it appears exactly when authentication is on.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod document;
mod statuses;

use std::collections::BTreeSet;
use std::path::Path;

use axum::http::{Method, StatusCode};
use seatclaim_core::domain::ReasonCode;
use seatclaim_e2e::{AppOptions, TestApp, assert_problem, hs256};
use serde_json::Value;

use document::{assert_well_formed, concrete, fetch, operations, responses};

/// The HS256 secret of the apps with authentication on.
const SECRET: &str = "openapi-test-secret-of-a-decent-length";

/// An app with authentication on (HS256).
async fn authenticated_app() -> TestApp {
    TestApp::spawn_with(AppOptions {
        auth: Some(hs256(SECRET)),
        ..AppOptions::default()
    })
    .await
}

#[tokio::test]
async fn the_document_is_openapi_3_1_and_lists_every_route_the_router_serves() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 4, 300).await;
    let document = fetch(&app).await;
    let version = document["openapi"].as_str().unwrap_or_default();
    assert!(version.starts_with("3.1"), "openapi is {version:?}");
    assert_eq!(document, seatclaim_api::openapi::document(false));
    assert_well_formed(&document);

    let routes = seatclaim_api::openapi::routes();
    let served: BTreeSet<(String, String)> = routes
        .iter()
        .map(|(method, path)| (method.to_string(), path.clone()))
        .collect();
    let documented: BTreeSet<(String, String)> = operations(&document)
        .into_iter()
        .map(|(method, path, _)| (method.to_string(), path))
        .collect();
    assert_eq!(documented, served, "the document lists the router's routes");
    for expected in [
        "/v1/events",
        "/v1/jobs/{job_id}/cancel",
        "/openapi.json",
        "/",
    ] {
        assert!(
            served.iter().any(|(_, path)| path == expected),
            "{expected}"
        );
    }

    // Each route is the router's own, not its fallback (404 "no such resource", or 405).
    let fallback = app.request(Method::GET, "/v1/no-such-route").send().await;
    let fallback_detail = assert_problem(&fallback, StatusCode::NOT_FOUND)["detail"].clone();
    for (method, path) in &routes {
        let reply = app.request(method.clone(), &concrete(path)).send().await;
        assert_ne!(
            reply.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        if reply.status == StatusCode::NOT_FOUND {
            assert_ne!(reply.json()["detail"], fallback_detail, "{method} {path}");
        }
    }
}

/// Text that adds a route to an axum router without going through `routes!`, which documents it.
const UNDOCUMENTED_ROUTING: &[&str] = &[
    ".route(",
    ".route_service(",
    ".nest(",
    ".nest_service(",
    ".merge(",
    ".fallback_service(",
];

#[test]
fn routes_are_added_to_the_router_only_through_the_documented_list() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../api/src");
    let mut found = Vec::new();
    for file in rust_files(&src) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if UNDOCUMENTED_ROUTING.iter().any(|call| code.contains(call)) {
                found.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "register routes with `.routes(routes!(handler))` so the OpenAPI document has them:\n{}",
        found.join("\n")
    );
}

fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// Whether an operation requires the bearer scheme.
fn needs_token(operation: &Value) -> bool {
    operation["security"]
        .as_array()
        .is_some_and(|all| all.iter().any(|r| r.get("bearerAuth").is_some()))
}

#[tokio::test]
async fn with_authentication_on_the_protected_operations_need_the_bearer_scheme() {
    let app = authenticated_app().await;
    let document = fetch(&app).await;
    assert_eq!(document, seatclaim_api::openapi::document(true));
    assert_well_formed(&document);
    let scheme = &document["components"]["securitySchemes"]["bearerAuth"];
    assert_eq!(
        (&scheme["type"], &scheme["scheme"], &scheme["bearerFormat"]),
        (&"http".into(), &"bearer".into(), &"JWT".into()),
        "{scheme}"
    );
    let mut protected = BTreeSet::new();
    for (method, path, operation) in operations(&document) {
        let reply = app.request(method.clone(), &concrete(&path)).send().await;
        let documents_401 = responses(operation).contains_key("401");
        if needs_token(operation) {
            assert_problem(&reply, StatusCode::UNAUTHORIZED);
            assert!(documents_401, "{method} {path} documents its 401");
            protected.insert(operation["operationId"].as_str().unwrap().to_owned());
        } else {
            assert_ne!(reply.status, StatusCode::UNAUTHORIZED, "{method} {path}");
            assert!(!documents_401, "{method} {path} is public");
        }
    }
    let expected = [
        "cancel_job",
        "close_waitlist",
        "confirm_job",
        "create_codes",
        "create_event",
        "event_summary",
        "extend_job",
        "reserve",
        "revoke_code",
        "show_code",
        "show_job",
    ];
    assert_eq!(protected, expected.map(str::to_owned).into());
}

#[tokio::test]
async fn with_authentication_off_no_operation_needs_a_token() {
    let app = TestApp::spawn().await;
    let document = fetch(&app).await;
    assert!(document["components"].get("securitySchemes").is_none());
    for (method, path, operation) in operations(&document) {
        assert!(operation.get("security").is_none(), "{method} {path}");
        assert!(!responses(operation).contains_key("401"), "{method} {path}");
    }
}

/// The schema `value` stands for, following a `$ref` (and the non-null arm of an optional
/// one).
fn schema<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
    let arms = value["oneOf"].as_array().into_iter().flatten();
    let value = arms
        .into_iter()
        .find(|arm| arm["type"] != "null")
        .unwrap_or(value);
    match value["$ref"].as_str() {
        Some(reference) => {
            let name = reference.trim_start_matches("#/components/schemas/");
            &document["components"]["schemas"][name]
        }
        None => value,
    }
}

#[test]
fn every_reason_code_is_in_the_document_on_the_job_and_on_the_problem() {
    let document = seatclaim_api::openapi::document(false);
    let schemas = &document["components"]["schemas"];
    let codes = &schemas["ReasonCode"];
    let listed: Vec<&str> = codes["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("no ReasonCode enum in {schemas}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let table: Vec<&str> = ReasonCode::ALL.iter().map(|code| code.as_str()).collect();
    assert_eq!(
        listed, table,
        "the document lists the table's codes, in order"
    );
    let description = codes["description"].as_str().unwrap_or_default();
    for code in ReasonCode::ALL {
        assert!(
            description.contains(&format!("`{}`: {}", code.as_str(), code.description())),
            "the description has the row of {code}: {description}"
        );
    }
    for (owner, field) in [("Job", "reason_code"), ("Problem", "reason_code")] {
        let property = &schemas[owner]["properties"][field];
        assert_eq!(
            schema(&document, property),
            codes,
            "{owner}.{field} is a ReasonCode: {property}"
        );
    }
    let required = schemas["Problem"]["required"].as_array().unwrap();
    assert!(
        required.contains(&"reason_code".into()),
        "every problem has its code"
    );
}
