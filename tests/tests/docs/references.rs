//! What a page names: the paths and Rust symbols of its code spans, the repository paths of its
//! code blocks, and its links, each with its line.

use super::workspace::is_identifier;

/// A path whose first folder is one of these is named from the repository's root; any other is
/// a tail of some path in it (`app/decide.rs`, `loops/`), as the pages write them.
const ROOTS: &[&str] = &["api", "worker", "shared", "deploy", "tests", "docs", ".ci"];

/// The file kinds a name without a folder (`Cargo.toml`, `lines.rs`) is taken as a repository
/// file for. Data files (`events.jsonl`, `event.json`, `seatclaim.lock`) are the user's or the
/// running service's, not the repository's.
const FILE_KINDS: &[&str] = &[
    "rs", "md", "sh", "toml", "yaml", "yml", "py", "mjs", "js", "css", "html", "lua", "sql",
];

/// A path with a folder also names a repository file when it ends in one of these.
const PATH_KINDS: &[&str] = &["json", "svg", "txt", "lock"];

/// `Fn::If`, `AWS::NoValue`: CloudFormation's intrinsic functions and pseudo parameters.
const NOT_RUST: &[&str] = &["Fn", "AWS"];

/// One thing a page names, at a line of it.
#[derive(Debug, PartialEq)]
pub enum Reference {
    /// A repository path, from the root or a tail of one.
    Path(String),
    /// A Rust path (`domain::SeatLimit`, `Job::settle`).
    Symbol(String),
    /// A link's target, from the page's folder.
    Link(String),
}

/// The references of a page, each with its line: the paths and symbols of its code spans, the
/// rooted paths of its code blocks, and its links.
pub fn references(page: &str) -> Vec<(usize, Reference)> {
    let mut found = Vec::new();
    let mut fenced = false;
    // The page with its code blocks blanked, so that a span never pairs a block's backtick.
    let mut prose = String::new();
    for (index, line) in page.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            let paths = line.split_whitespace().filter_map(path_in);
            let rooted = paths.filter(|path| is_rooted(path));
            found.extend(rooted.map(|path| (index + 1, Reference::Path(path))));
        } else {
            prose.push_str(line);
        }
        prose.push('\n');
    }
    for (at, span) in code_spans(&prose) {
        let line = prose[..at].matches('\n').count() + 1;
        for token in tokens(span) {
            if let Some(reference) = symbol_in(&token)
                .map(Reference::Symbol)
                .or_else(|| path_in(&token).map(Reference::Path))
            {
                found.push((line, reference));
            }
        }
    }
    for (at, target) in link_targets(&prose) {
        found.push((
            prose[..at].matches('\n').count() + 1,
            Reference::Link(target),
        ));
    }
    found
}

/// Each code span of `text` (`` `like this` ``) with its offset; one never crosses a paragraph.
fn code_spans(text: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find('`').map(|i| at + i) {
        let ticks = text[open..].len() - text[open..].trim_start_matches('`').len();
        let fence = &text[open..open + ticks];
        let start = open + ticks;
        match text[start..].find(fence).map(|i| start + i) {
            Some(close) if !text[start..close].contains("\n\n") => {
                spans.push((open, &text[start..close]));
                at = close + ticks;
            }
            _ => at = start,
        }
    }
    spans
}

/// The targets of `text`'s links that lead into the repository, with their offsets.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut targets = Vec::new();
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        let target = rest[..rest.find(')').unwrap_or(rest.len())]
            .split_whitespace()
            .next();
        let target = target.unwrap_or_default().split('#').next().unwrap();
        if !target.is_empty() && !target.contains(':') {
            targets.push((at, target.to_owned()));
        }
    }
    targets
}

/// A span's words, with a group (`ClaimOutcome::{Held, Unavailable}`) spelled out as one path
/// per member.
fn tokens(span: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = span;
    while let Some(open) = rest.find("::{") {
        let Some(close) = rest[open..].find('}').map(|i| open + i) else {
            break;
        };
        let start = rest[..open].rfind(char::is_whitespace).map_or(0, |i| i + 1);
        found.extend(rest[..start].split_whitespace().map(str::to_owned));
        let head = &rest[start..open];
        found.extend(
            rest[open + 3..close]
                .split(',')
                .map(|member| format!("{head}::{}", member.trim())),
        );
        rest = &rest[close + 1..];
    }
    found.extend(rest.split_whitespace().map(str::to_owned));
    found
}

/// The Rust path a word names, without a call's parentheses or generics; none for what is not
/// Rust (`Fn::If`, a URL, `Prefer: wait`).
fn symbol_in(word: &str) -> Option<String> {
    if !word.contains("::") || word.contains("://") {
        return None;
    }
    let path = word
        .split(['(', '<'])
        .next()
        .unwrap()
        .trim_end_matches([':', ',', '.', ';']);
    let segments: Vec<&str> = path.split("::").collect();
    (segments.iter().all(|segment| is_identifier(segment)) && !NOT_RUST.contains(&segments[0]))
        .then(|| path.to_owned())
}

/// The repository path a word names, without a line number, an anchor or a trailing glob; none
/// for a URL, an HTTP route (`/v1/jobs/{id}`), a placeholder (`shared/<name>/`), a home, data or
/// relative path (`~/.aws`, `./data`), or a word that is no file name.
fn path_in(word: &str) -> Option<String> {
    let word = word.trim_start_matches(['(', '"', '\'']);
    let word = word.trim_end_matches([')', '"', '\'', ',', ';', '.', ':']);
    let word = word.split('#').next().unwrap();
    let word = match word.split_once(':') {
        Some((path, line)) if line.chars().all(|c| c.is_ascii_digit() || c == ':') => path,
        _ => word,
    };
    let word = match word.rsplit_once('/') {
        Some((folder, last)) if last.contains('*') => &word[..=folder.len()],
        _ => word,
    };
    let placeholder = word.contains(['<', '>', '{', '}', '$', '=', '@', '*', '~', ':']);
    let outside = word.starts_with(['/', '-']) || word.starts_with("./") || word.starts_with("../");
    if word.is_empty() || placeholder || outside || word.starts_with("target/") {
        return None;
    }
    let kind = word
        .rsplit_once('.')
        .map(|(_, kind)| kind)
        .unwrap_or_default();
    let named = FILE_KINDS.contains(&kind) || (word.contains('/') && PATH_KINDS.contains(&kind));
    (is_rooted(word) || named || word.ends_with('/')).then(|| word.to_owned())
}

/// Whether `path` is named from the repository's root (`tests/run.sh`), not by its tail.
pub fn is_rooted(path: &str) -> bool {
    path.split_once('/')
        .is_some_and(|(first, _)| ROOTS.contains(&first))
}
