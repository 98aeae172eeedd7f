//! A small OpenID Connect provider on a real socket, for the web page's sign-in: discovery, an
//! authorization endpoint that signs in one fixed subject at once (no login form) and sends the
//! browser back to the redirect URI with a code and the state, a token endpoint that checks the
//! code (once only), the client, the redirect URI and the PKCE verifier (S256) before it answers
//! an access token signed with a fixture key, and that key as a JWKS for the API to check the
//! token with. Anything it refuses is a 400 with an OAuth error (RFC 6749 section 5.2).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::tokens::{RSA_A, claims, jwks, signed_token};

/// The key id the issuer signs under and publishes in its JWKS.
const KID: &str = "test-issuer-key";

/// A request's query or form parameters.
type Parameters = HashMap<String, String>;

/// A running test identity provider, stopped when dropped.
pub struct TestIssuer {
    /// Its issuer identifier and base URL, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

/// What the endpoints share.
struct Shared {
    issuer: String,
    client_id: String,
    subject: String,
    books: Mutex<Books>,
}

/// What the issuer has registered and handed out.
#[derive(Default)]
struct Books {
    /// The redirect URIs the client may use.
    redirect_uris: Vec<String>,
    /// Codes not exchanged yet.
    codes: HashMap<String, Grant>,
    /// Every access token issued, in order.
    issued: Vec<String>,
}

/// An authorization code's request: what the token endpoint holds the exchange to.
struct Grant {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
}

impl TestIssuer {
    /// Starts a provider on a free local port for the public client `client_id`, signing in
    /// `subject` whenever asked; register redirect URIs with [`TestIssuer::allow_redirect_uri`].
    pub async fn start(client_id: &str, subject: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared {
            issuer: url.clone(),
            client_id: client_id.to_owned(),
            subject: subject.to_owned(),
            books: Mutex::default(),
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/jwks.json", get(|| async { Json(jwks(&[(RSA_A, KID)])) }))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url,
            shared,
            server,
        }
    }

    /// Registers `uri` as one the client may be sent back to (the page's root, once the API
    /// serving it has its address).
    pub fn allow_redirect_uri(&self, uri: &str) {
        self.shared.books().redirect_uris.push(uri.to_owned());
    }

    /// The JWKS URL the API checks the issuer's tokens against.
    #[must_use]
    pub fn jwks_url(&self) -> String {
        format!("{}/jwks.json", self.url)
    }

    /// The access tokens issued so far, in order.
    #[must_use]
    pub fn issued(&self) -> Vec<String> {
        self.shared.books().issued.clone()
    }
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Shared {
    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books.lock().unwrap()
    }
}

/// The PKCE S256 challenge of `verifier` (RFC 7636 section 4.2).
#[must_use]
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A JSON answer any origin's page may read: the page calls discovery and the token endpoint
/// from the API's origin, as it calls a real issuer's.
fn cross_origin(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// A refusal: 400 with an OAuth error and why.
fn refused(error: &str, why: &str) -> Response {
    cross_origin(
        StatusCode::BAD_REQUEST,
        &json!({"error": error, "error_description": why}),
    )
}

async fn discovery(State(shared): State<Arc<Shared>>) -> Response {
    let issuer = &shared.issuer;
    cross_origin(
        StatusCode::OK,
        &json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks.json"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }),
    )
}

/// A request's parameter, empty when it is missing.
fn field<'a>(parameters: &'a Parameters, name: &str) -> &'a str {
    parameters.get(name).map_or("", String::as_str)
}

/// Signs the subject in at once and sends the browser back with a code (RFC 6749 section 4.1.1,
/// RFC 7636 section 4.3). An unknown client or redirect URI is refused here (a browser must
/// never be sent to an unregistered address); a request without an S256 challenge goes back
/// with `error=invalid_request`.
async fn authorize(
    State(shared): State<Arc<Shared>>,
    Query(request): Query<Parameters>,
) -> Response {
    let mut books = shared.books();
    let (client_id, redirect_uri) = (
        field(&request, "client_id"),
        field(&request, "redirect_uri"),
    );
    if client_id != shared.client_id {
        return refused("unauthorized_client", "unknown client_id");
    }
    let registered = books.redirect_uris.iter().any(|uri| uri == redirect_uri);
    let Some(mut back) = reqwest::Url::parse(redirect_uri)
        .ok()
        .filter(|_| registered)
    else {
        return refused("invalid_request", "redirect_uri is not registered");
    };
    let code_challenge = field(&request, "code_challenge");
    if field(&request, "response_type") == "code"
        && field(&request, "code_challenge_method") == "S256"
        && !code_challenge.is_empty()
    {
        let code = uuid::Uuid::new_v4().to_string();
        back.query_pairs_mut().append_pair("code", &code);
        let grant = Grant {
            client_id: client_id.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            code_challenge: code_challenge.to_owned(),
        };
        books.codes.insert(code, grant);
    } else {
        back.query_pairs_mut()
            .append_pair("error", "invalid_request")
            .append_pair(
                "error_description",
                "response_type=code with an S256 challenge",
            );
    }
    if let Some(state) = request.get("state") {
        back.query_pairs_mut().append_pair("state", state);
    }
    Redirect::to(back.as_str()).into_response()
}

/// Exchanges a code for an access token (RFC 6749 section 4.1.3, RFC 7636 section 4.6),
/// checking that the code is known and unused (it is spent by this attempt, whatever its
/// outcome), that the client and the redirect URI are the authorization request's, and that the
/// verifier's S256 is its challenge.
async fn token(State(shared): State<Arc<Shared>>, Form(request): Form<Parameters>) -> Response {
    if field(&request, "grant_type") != "authorization_code" {
        return refused("unsupported_grant_type", "only authorization_code");
    }
    let mut books = shared.books();
    let Some(grant) = books.codes.remove(field(&request, "code")) else {
        return refused("invalid_grant", "unknown or already used code");
    };
    if field(&request, "client_id") != grant.client_id {
        return refused("invalid_client", "the code was issued to another client");
    }
    if field(&request, "redirect_uri") != grant.redirect_uri {
        return refused(
            "invalid_grant",
            "redirect_uri differs from the authorization request's",
        );
    }
    let verifier = field(&request, "code_verifier");
    if verifier.is_empty() || s256_challenge(verifier) != grant.code_challenge {
        return refused(
            "invalid_grant",
            "code_verifier does not match the code_challenge",
        );
    }
    // As Cognito's access tokens: the client in `client_id`, no `aud`.
    let extra = json!({
        "iss": shared.issuer,
        "client_id": grant.client_id,
        "token_use": "access",
        "scope": "openid",
    });
    let access_token = signed_token(RSA_A, KID, &claims(&shared.subject, &extra));
    books.issued.push(access_token.clone());
    cross_origin(
        StatusCode::OK,
        &json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "scope": "openid",
        }),
    )
}
