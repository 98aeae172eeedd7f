//! The headers every answer carries, so that a browser treats the API's answers and the page as
//! what they are: no content sniffing, no referrer leaking a job's address to other sites, and a
//! Content-Security-Policy that runs only the page's own scripts, lets it fetch only from the
//! API and from its OpenID Connect issuer, and lets no other site frame it (clickjacking). HSTS
//! is the TLS terminator's to add (the stack's CloudFront response-headers policy): the API
//! itself serves plain HTTP behind it.

use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS};
use tower::ServiceBuilder;
use tower::layer::util::{Identity, Stack};
use tower_http::set_header::SetResponseHeaderLayer;

/// One header set on every answer.
type Header = SetResponseHeaderLayer<HeaderValue>;

/// The three headers as one layer: applied once, so that a request pays for one boxed service
/// instead of one per header.
pub(crate) type Headers = Stack<Header, Stack<Header, Stack<Header, Identity>>>;

/// The headers every answer carries; `connect` lists the origins, beyond the API's own, that
/// the page may fetch from (its OpenID Connect issuer's endpoints).
pub(crate) fn layer(connect: &[String]) -> Headers {
    let policy = HeaderValue::from_str(&content_security_policy(connect))
        .unwrap_or_else(|_| HeaderValue::from_static(STRICTEST));
    ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::overriding(
            X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            CONTENT_SECURITY_POLICY,
            policy,
        ))
        .into_inner()
}

/// The policy with no origin beyond the API's own.
const STRICTEST: &str = "default-src 'self'; img-src 'self' data:; object-src 'none'; \
    base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The policy: everything from the API's own origin only (the favicon is an empty `data:`
/// URL), fetches also to `connect`.
fn content_security_policy(connect: &[String]) -> String {
    if connect.is_empty() {
        return STRICTEST.to_owned();
    }
    format!("{STRICTEST}; connect-src 'self' {}", connect.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issuers_origins_are_the_only_other_places_the_page_may_fetch_from() {
        assert!(!content_security_policy(&[]).contains("connect-src"));
        let policy = content_security_policy(&[
            "https://issuer.example".into(),
            "https://auth.example".into(),
        ]);
        assert!(policy.starts_with("default-src 'self';"), "{policy}");
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(
            policy.ends_with("connect-src 'self' https://issuer.example https://auth.example"),
            "{policy}"
        );
    }
}
