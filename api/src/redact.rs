//! What of a request the logs may show: an access code in a path (`.../codes/<code>`) is cut
//! off, since a code is a secret of its holder's.

use std::borrow::Cow;

/// `path` as the request log shows it.
#[must_use]
pub fn path(path: &str) -> Cow<'_, str> {
    match path.find("/codes/") {
        Some(at) => Cow::Owned(format!("{}/codes/-", &path[..at])),
        None => Cow::Borrowed(path),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_code_in_a_path_is_cut_off() {
        assert_eq!(
            super::path("/v1/events/e1/codes/FAN-7Q2X"),
            "/v1/events/e1/codes/-"
        );
        assert_eq!(super::path("/v1/events/e1/codes"), "/v1/events/e1/codes");
        assert_eq!(super::path("/v1/jobs/1"), "/v1/jobs/1");
    }
}
