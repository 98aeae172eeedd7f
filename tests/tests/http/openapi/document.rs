//! Reading the served document: its operations and responses, concrete paths to call them on,
//! and the structural rules of OpenAPI 3.1 a tool relies on.

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use seatclaim_e2e::TestApp;
use serde_json::{Map, Value};

/// The methods an OpenAPI path item may hold, as its keys spell them.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// `GET /openapi.json`, checked to be JSON.
pub async fn fetch(app: &TestApp) -> Value {
    let reply = app.request(Method::GET, "/openapi.json").send().await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(reply.header("content-type").starts_with("application/json"));
    reply.json()
}

/// Every operation of the document with its method and path.
pub fn operations(document: &Value) -> Vec<(Method, String, &Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in METHODS {
            if let Some(operation) = item.get(method) {
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                all.push((method, path.clone(), operation));
            }
        }
    }
    all
}

/// The operation at `method` and `path`, failing the test if the document has none.
pub fn operation<'a>(document: &'a Value, method: &Method, path: &str) -> &'a Value {
    document["paths"][path]
        .get(method.as_str().to_lowercase())
        .unwrap_or_else(|| panic!("the document has no operation {method} {path}"))
}

/// An operation's responses by status.
pub fn responses(operation: &Value) -> &Map<String, Value> {
    operation["responses"].as_object().unwrap()
}

/// A path of the template to send requests to: event e1, an unknown job.
pub fn concrete(template: &str) -> String {
    template
        .replace("{event_id}", "e1")
        .replace("{job_id}", "00000000-0000-0000-0000-000000000000")
}

/// The OpenAPI 3.1 rules this document could break: info, unique operation ids, a described
/// success response per operation, declared path parameters, resolvable references, and
/// security requirements naming declared schemes.
pub fn assert_well_formed(document: &Value) {
    assert!(document["info"]["title"].is_string() && document["info"]["version"].is_string());
    let mut ids = BTreeSet::new();
    for (method, path, operation) in operations(document) {
        let what = format!("{method} {path}");
        let id = operation["operationId"].as_str().expect(&what);
        assert!(
            ids.insert(id.to_owned()),
            "{what}: operationId {id} is taken"
        );
        let statuses = responses(operation);
        assert!(
            statuses.keys().any(|s| s.starts_with('2')),
            "{what}: no 2xx"
        );
        for (status, response) in statuses {
            assert!(response["description"].is_string(), "{what} {status}");
        }
        let declared: BTreeSet<&str> = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "path" && p["required"] == true)
            .filter_map(|p| p["name"].as_str())
            .collect();
        let in_template: BTreeSet<&str> = path
            .split('/')
            .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        assert_eq!(declared, in_template, "{what}: path parameters");
        for requirement in operation["security"].as_array().into_iter().flatten() {
            for scheme in requirement.as_object().unwrap().keys() {
                assert!(
                    document["components"]["securitySchemes"]
                        .get(scheme)
                        .is_some(),
                    "{what}: unknown security scheme {scheme}"
                );
            }
        }
    }
    for (method, path, operation) in operations(document) {
        for (status, response) in responses(operation) {
            for link in response["links"]
                .as_object()
                .into_iter()
                .flat_map(Map::values)
            {
                let target = link["operationId"].as_str().unwrap_or_default();
                assert!(
                    ids.contains(target),
                    "{method} {path} {status}: link to {link}"
                );
            }
        }
    }
    assert_references_resolve(document, document);
}

/// Every `$ref` names a schema of the document's components.
fn assert_references_resolve(document: &Value, value: &Value) {
    match value {
        Value::Object(fields) => {
            if let Some(reference) = fields.get("$ref").and_then(Value::as_str) {
                let name = reference
                    .strip_prefix("#/components/schemas/")
                    .unwrap_or_else(|| panic!("a reference outside the schemas: {reference}"));
                assert!(
                    document["components"]["schemas"].get(name).is_some(),
                    "{reference} resolves"
                );
            }
            fields
                .values()
                .for_each(|v| assert_references_resolve(document, v));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| assert_references_resolve(document, v)),
        _ => {}
    }
}
