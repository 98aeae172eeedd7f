//! A crate's modules as its `mod name;` declarations make them, from its root file, and where a
//! path written in one of them leads: to the deepest module it names, following the imports of
//! the modules it passes through (`super::Db` in a child of a file that says `use db::Db;` leads
//! to `db`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::rust_paths::{Import, imports, is_identifier};
use super::rust_tokens::{Token, tokens};

/// A module's path from its crate's root, `[]` for the root itself.
pub type ModulePath = Vec<String>;

/// One module file, read.
pub struct Module {
    /// The file, for messages.
    pub file: PathBuf,
    /// Its tokens, without its `#[cfg(test)]` items.
    pub tokens: Vec<Token>,
    /// What its `use`s bring in.
    pub imports: Vec<Import>,
}

/// Every module of one crate target.
pub struct Tree {
    /// By path.
    pub modules: BTreeMap<ModulePath, Module>,
}

/// How many imports a path may pass through before the walk gives up (a re-export of a
/// re-export is as deep as seatclaim goes).
const MOST_HOPS: usize = 8;

impl Tree {
    /// The modules under the root file `root` (a `lib.rs` or `main.rs`).
    pub fn read(root: &Path) -> Self {
        let mut tree = Self {
            modules: BTreeMap::new(),
        };
        tree.add(
            Vec::new(),
            root.to_path_buf(),
            root.parent().unwrap().to_path_buf(),
        );
        tree
    }

    /// Adds the module at `path` read from `file`, whose children live in `folder`.
    fn add(&mut self, path: ModulePath, file: PathBuf, folder: PathBuf) {
        let source = std::fs::read_to_string(&file).unwrap();
        let tokens = tokens(&source);
        let children = declared_modules(&tokens);
        self.modules.insert(
            path.clone(),
            Module {
                file,
                imports: imports(&tokens),
                tokens,
            },
        );
        for child in children {
            let flat = folder.join(format!("{child}.rs"));
            let (file, inner) = if flat.exists() {
                (flat, folder.join(&child))
            } else {
                (folder.join(&child).join("mod.rs"), folder.join(&child))
            };
            let mut child_path = path.clone();
            child_path.push(child);
            self.add(child_path, file, inner);
        }
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.modules.contains_key(path)
    }

    /// The deepest module `path`, written in module `from`, names; `None` for another crate's.
    pub fn resolve(&self, from: &[String], path: &[String]) -> Option<ModulePath> {
        self.walk(from, path, MOST_HOPS).map(|(module, _)| module)
    }

    /// [`Tree::resolve`], saying too whether every segment was a module (so more may follow),
    /// within `hops` more imports.
    fn walk(&self, from: &[String], path: &[String], hops: usize) -> Option<(ModulePath, bool)> {
        let (mut at, rest) = self.start(from, path, hops)?;
        for (index, segment) in rest.iter().enumerate() {
            let mut child = at.clone();
            child.push(segment.clone());
            if self.is_module(&child) {
                at = child;
                continue;
            }
            // An item of `at`: one it imports leads on to the module it comes from.
            return match self.imported(&at, segment, hops) {
                Some((module, true)) if index + 1 < rest.len() => self
                    .walk(&module, &rest[index + 1..], hops.checked_sub(1)?)
                    .or(Some((module, false))),
                Some((module, _)) => Some((module, false)),
                None => Some((at, false)),
            };
        }
        Some((at, true))
    }

    /// Where a path's first segments lead, and the segments left to walk from there.
    fn start<'p>(
        &self,
        from: &[String],
        path: &'p [String],
        hops: usize,
    ) -> Option<(ModulePath, &'p [String])> {
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => Some((Vec::new(), rest)),
            "self" => Some((from.to_vec(), rest)),
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                let depth = from.len().checked_sub(supers)?;
                Some((from[..depth].to_vec(), &path[supers..]))
            }
            // A path relative to `from` (edition 2018): its child, or a name it imports.
            name if is_identifier(name) => {
                let mut child = from.to_vec();
                child.push(name.to_owned());
                if self.is_module(&child) {
                    return Some((child, rest));
                }
                let (module, whole) = self.imported(from, name, hops)?;
                Some((module, if whole { rest } else { &[] }))
            }
            _ => None,
        }
    }

    /// Where the name `name`, imported by module `at`, comes from.
    fn imported(&self, at: &[String], name: &str, hops: usize) -> Option<(ModulePath, bool)> {
        let import = self.modules[at]
            .imports
            .iter()
            .find(|import| import.alias.as_deref() == Some(name))?;
        self.walk(at, &import.path, hops.checked_sub(1)?)
    }
}

/// The names of the modules `tokens` declare from files of their own (`mod name;`).
fn declared_modules(tokens: &[Token]) -> Vec<String> {
    tokens
        .windows(3)
        .filter(|w| w[0].text == "mod" && is_identifier(&w[1].text) && w[2].text == ";")
        .map(|w| w[1].text.clone())
        .collect()
}
