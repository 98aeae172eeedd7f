//! The paths a file's tokens write: what each `use` brings in (its groups expanded), and the
//! paths elsewhere that start at `super`, `crate` or `self`.

use super::rust_tokens::{Token, tokens};

/// What one `use` brings in: a path, and the name it is known by here (`None` for a glob).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The path as written, `self` in a group folded into its prefix.
    pub path: Vec<String>,
    /// The name it binds (`as` or the last segment); `None` for `*`.
    pub alias: Option<String>,
    /// The line of its `use`.
    pub line: usize,
}

/// Every import of `tokens` (from each `use` to its `;`).
pub fn imports(tokens: &[Token]) -> Vec<Import> {
    let mut found = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        if token.text == "use" {
            let mut parser = UseParser {
                tokens,
                at: at + 1,
                line: token.line,
                found: &mut found,
            };
            parser.tree(&[]);
        }
    }
    found
}

struct UseParser<'a> {
    tokens: &'a [Token],
    at: usize,
    line: usize,
    found: &'a mut Vec<Import>,
}

impl UseParser<'_> {
    fn text(&self) -> &str {
        self.tokens.get(self.at).map_or("", |t| t.text.as_str())
    }

    /// One use tree after `prefix`: `a::b`, `a as c`, `a::{..}`, `*`, `self`.
    fn tree(&mut self, prefix: &[String]) {
        let mut path = prefix.to_vec();
        if self.text() == "::" {
            self.at += 1;
        }
        loop {
            match self.text() {
                "{" => return self.group(&path),
                "*" => {
                    self.at += 1;
                    return self.push(path, None);
                }
                "self" if !path.is_empty() => self.at += 1,
                word if is_identifier(word) => {
                    path.push(word.to_owned());
                    self.at += 1;
                }
                _ => return,
            }
            if self.text() != "::" {
                break;
            }
            self.at += 1;
        }
        let alias = if self.text() == "as" {
            self.at += 1;
            let alias = self.text().to_owned();
            self.at += 1;
            alias
        } else {
            path.last().cloned().unwrap_or_default()
        };
        self.push(path, Some(alias));
    }

    fn group(&mut self, prefix: &[String]) {
        self.at += 1;
        while !matches!(self.text(), "}" | "") {
            self.tree(prefix);
            if self.text() == "," {
                self.at += 1;
            } else if self.text() != "}" {
                return;
            }
        }
        self.at += 1;
    }

    fn push(&mut self, path: Vec<String>, alias: Option<String>) {
        if !path.is_empty() {
            self.found.push(Import {
                path,
                alias,
                line: self.line,
            });
        }
    }
}

/// Whether `word` can start or continue a path.
pub fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The paths outside `use` that start at `super`, `crate` or `self` (`super::writer::Writer`),
/// each with its line; a path stops before `::{`, `::<` or `::*`.
pub fn rooted_paths(tokens: &[Token]) -> Vec<(Vec<String>, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    let mut in_use = false;
    while at < tokens.len() {
        let text = tokens[at].text.as_str();
        match text {
            "use" => in_use = true,
            ";" => in_use = false,
            "super" | "crate" | "self" if !in_use && !after_separator(tokens, at) => {
                let line = tokens[at].line;
                let mut path = vec![text.to_owned()];
                while tokens.get(at + 1).is_some_and(|t| t.text == "::")
                    && tokens.get(at + 2).is_some_and(|t| is_identifier(&t.text))
                {
                    path.push(tokens[at + 2].text.clone());
                    at += 2;
                }
                found.push((path, line));
            }
            _ => {}
        }
        at += 1;
    }
    found
}

fn after_separator(tokens: &[Token], at: usize) -> bool {
    at > 0 && tokens[at - 1].text == "::"
}

#[test]
fn a_use_tree_expands_to_each_name_it_binds() {
    let found = imports(&tokens("use super::{db::{self, Db as D}, x::*};"));
    let bound: Vec<(String, Option<String>)> = found
        .into_iter()
        .map(|i| (i.path.join("::"), i.alias))
        .collect();
    assert_eq!(
        bound,
        [
            ("super::db".to_owned(), Some("db".to_owned())),
            ("super::db::Db".to_owned(), Some("D".to_owned())),
            ("super::x".to_owned(), None),
        ]
    );
}

#[test]
fn rooted_paths_outside_use_are_found_with_their_lines() {
    let found = rooted_paths(&tokens("use super::a;\nfn f() { super::b::c::<T>(); }"));
    assert_eq!(found, [(vec!["super".into(), "b".into(), "c".into()], 2)]);
}
