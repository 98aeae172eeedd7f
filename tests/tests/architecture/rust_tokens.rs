//! Just enough of Rust's lexical grammar to find module paths in a source file: identifiers,
//! `::` and single punctuation, with comments, string and character literals and lifetimes
//! dropped (a path inside a string or a doc comment is no dependency), and the items under
//! `#[cfg(test)]` left out (see `module_cycles.rs` for why). `rust_paths.rs` reads the paths.

/// One token and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// An identifier or keyword, `::`, or one punctuation character.
    pub text: String,
    /// From 1.
    pub line: usize,
}

/// The tokens of `source`, without its `#[cfg(test)]` items.
pub fn tokens(source: &str) -> Vec<Token> {
    without_test_items(lex(source))
}

fn lex(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        at: 0,
        line: 1,
    };
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token() {
        tokens.push(token);
    }
    tokens
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
    line: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Moves past `count` characters, counting the lines they end.
    fn skip(&mut self, count: usize) {
        for _ in 0..count {
            if self.peek(0) == Some('\n') {
                self.line += 1;
            }
            self.at += 1;
        }
    }

    fn next_token(&mut self) -> Option<Token> {
        loop {
            let c = self.peek(0)?;
            let line = self.line;
            match (c, self.peek(1)) {
                (c, _) if c.is_whitespace() => self.skip(1),
                ('/', Some('/')) => self.skip_while(|c| c != '\n'),
                ('/', Some('*')) => self.skip_block_comment(),
                ('"', _) => self.skip_string(0),
                ('\'', _) => self.skip_quote(),
                (':', Some(':')) => {
                    self.skip(2);
                    return Some(Token {
                        text: "::".to_owned(),
                        line,
                    });
                }
                (c, _) if c.is_alphanumeric() || c == '_' => {
                    if let Some(text) = self.word() {
                        return Some(Token { text, line });
                    }
                }
                (c, _) => {
                    self.skip(1);
                    return Some(Token {
                        text: c.to_string(),
                        line,
                    });
                }
            }
        }
    }

    fn skip_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek(0).is_some_and(&keep) {
            self.skip(1);
        }
    }

    fn skip_block_comment(&mut self) {
        let mut depth = 0;
        while let Some(c) = self.peek(0) {
            match (c, self.peek(1)) {
                ('/', Some('*')) => (depth, _) = (depth + 1, self.skip(2)),
                ('*', Some('/')) => {
                    self.skip(2);
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => self.skip(1),
            }
        }
    }

    /// A string from its opening quote, raw when `hashes` (the `#`s before the quote, already
    /// passed) is not zero or the caller saw an `r`.
    fn skip_string(&mut self, hashes: usize) {
        self.skip(1);
        let close: String = std::iter::once('"')
            .chain(std::iter::repeat_n('#', hashes))
            .collect();
        while let Some(c) = self.peek(0) {
            if hashes == 0 && c == '\\' {
                self.skip(2);
            } else if self.chars[self.at..].starts_with(&close.chars().collect::<Vec<_>>()) {
                self.skip(close.len());
                return;
            } else {
                self.skip(1);
            }
        }
    }

    /// A character literal (`'a'`, `'\n'`, `'\u{1F600}'`) or a lifetime (`'a`), both dropped.
    fn skip_quote(&mut self) {
        match (self.peek(1), self.peek(2)) {
            (Some('\\'), _) => {
                self.skip(2);
                self.skip_while(|c| c != '\'');
                self.skip(1);
            }
            (Some(_), Some('\'')) => self.skip(3),
            _ => {
                self.skip(1);
                self.skip_while(|c| c.is_alphanumeric() || c == '_');
            }
        }
    }

    /// An identifier or number; `None` when the letters were a string's prefix (`r"`, `b"`,
    /// `br#"`, `b'`), whose literal is then skipped.
    fn word(&mut self) -> Option<String> {
        let start = self.at;
        self.skip_while(|c| c.is_alphanumeric() || c == '_');
        let word: String = self.chars[start..self.at].iter().collect();
        let raw = matches!(word.as_str(), "r" | "br" | "cr");
        let prefix = raw || matches!(word.as_str(), "b" | "c");
        match self.peek(0) {
            Some('"') if prefix => self.skip_string(usize::from(raw)),
            Some('\'') if word == "b" => self.skip_quote(),
            Some('#') if raw => {
                let hashes = self.chars[self.at..]
                    .iter()
                    .take_while(|c| **c == '#')
                    .count();
                if self.peek(hashes) != Some('"') {
                    // A raw identifier, `r#type`.
                    self.skip(1);
                    return self.word();
                }
                self.skip(hashes);
                self.skip_string(hashes);
            }
            _ => return Some(word),
        }
        None
    }
}

/// Drops each item an exact `#[cfg(test)]` stands on: unit tests and test-only helpers.
fn without_test_items(tokens: Vec<Token>) -> Vec<Token> {
    const CFG_TEST: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];
    let mut kept = Vec::with_capacity(tokens.len());
    let mut at = 0;
    while at < tokens.len() {
        let marks = tokens[at..].iter().map(|t| t.text.as_str());
        if marks.take(CFG_TEST.len()).eq(CFG_TEST) {
            at = end_of_item(&tokens, at + CFG_TEST.len());
        } else {
            kept.push(tokens[at].clone());
            at += 1;
        }
    }
    kept
}

/// Where the item starting at `at` ends: after its `;` or its outermost block (and a `;` right
/// after that block, as in `const X: T = T { .. };`).
fn end_of_item(tokens: &[Token], mut at: usize) -> usize {
    let mut depth = 0_usize;
    while let Some(token) = tokens.get(at) {
        at += 1;
        match token.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let semicolon = tokens.get(at).is_some_and(|t| t.text == ";");
                    return at + usize::from(semicolon);
                }
            }
            ";" if depth == 0 => return at,
            _ => {}
        }
    }
    at
}

fn texts(source: &str) -> Vec<String> {
    tokens(source).into_iter().map(|t| t.text).collect()
}

#[test]
fn comments_strings_and_lifetimes_are_no_tokens() {
    let source = "a // super::x\n/* crate::y /* nested */ */ \"super::z\" r#\"q\"# 'c' '\\n' &'a b";
    assert_eq!(texts(source), ["a", "&", "b"]);
}

#[test]
fn a_cfg_test_item_is_left_out() {
    let source = "use a;\n#[cfg(test)]\nmod tests { use super::b; }\nfn c() {}";
    assert_eq!(
        texts(source),
        ["use", "a", ";", "fn", "c", "(", ")", "{", "}"]
    );
}
