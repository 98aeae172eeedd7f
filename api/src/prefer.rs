//! The `Prefer` request header (RFC 7240) as the reservation POST reads it: only the `wait`
//! preference (section 4.3), which asks the server to answer with the decided job if it can
//! within that many seconds. Every other preference, `respond-async` among them, changes
//! nothing: seatclaim answers asynchronously unless the decision comes within the wait.

use axum::http::HeaderMap;
use axum::http::header::HeaderName;

/// The request header.
const PREFER: HeaderName = HeaderName::from_static("prefer");

/// The response header naming the preference honoured.
pub const PREFERENCE_APPLIED: HeaderName = HeaderName::from_static("preference-applied");

/// The seconds of the request's first `wait` preference, when it is a positive integer.
///
/// RFC 7240: a header may hold several comma-separated preferences, each with `;` parameters,
/// and may be repeated; names are case-insensitive; a value may be a token or a quoted string;
/// of a preference given more than once, only the first counts. A `wait` of 0, or one that is
/// not a non-negative integer, asks for nothing. A number too large for `u64` is as good as
/// "as long as you allow" and saturates.
#[must_use]
pub fn wait_seconds(headers: &HeaderMap) -> Option<u64> {
    let first_wait = headers
        .get_all(PREFER)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|preference| {
            let head = preference.split(';').next().unwrap_or_default();
            let (name, value) = head.split_once('=').unwrap_or((head, ""));
            name.trim()
                .eq_ignore_ascii_case("wait")
                .then(|| value.trim())
        })
        .next()?;
    let digits = first_wait
        .strip_prefix('"')
        .and_then(|quoted| quoted.strip_suffix('"'))
        .unwrap_or(first_wait);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds = digits.parse::<u64>().unwrap_or(u64::MAX);
    (seconds > 0).then_some(seconds)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn wait_of(values: &[&str]) -> Option<u64> {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                PREFER,
                HeaderValue::from_str(value).expect("a header value"),
            );
        }
        wait_seconds(&headers)
    }

    #[test]
    fn a_positive_wait_is_read_alone_or_among_other_preferences() {
        assert_eq!(wait_of(&["wait=5"]), Some(5));
        assert_eq!(wait_of(&["respond-async, wait=7"]), Some(7));
        assert_eq!(wait_of(&["handling=lenient; x=1 ,  WAIT = 3 ;p"]), Some(3));
        assert_eq!(wait_of(&["return=minimal", "wait=\"4\""]), Some(4));
        assert_eq!(wait_of(&["wait=99999999999999999999999"]), Some(u64::MAX));
    }

    #[test]
    fn no_usable_wait_asks_for_nothing() {
        assert_eq!(wait_of(&[]), None);
        assert_eq!(wait_of(&["respond-async"]), None);
        assert_eq!(wait_of(&["wait=0"]), None);
        for bad in [
            "wait",
            "wait=",
            "wait=-1",
            "wait=1.5",
            "wait=5s",
            "wait=\"\"",
            "wait= +2",
        ] {
            assert_eq!(wait_of(&[bad]), None, "{bad}");
        }
        assert_eq!(wait_of(&["waiting=5"]), None);
    }

    #[test]
    fn only_the_first_wait_counts() {
        assert_eq!(wait_of(&["wait=2, wait=9"]), Some(2));
        assert_eq!(wait_of(&["wait=x", "wait=9"]), None);
    }
}
