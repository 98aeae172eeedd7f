//! No two modules of a crate import each other.
//!
//! What counts, precisely. Every target of every workspace crate (its `lib.rs`, each binary's
//! `main.rs`, the test binary) is read as a tree of modules, one per file, from its `mod name;`
//! declarations (an inline `mod name { .. }` is read as part of its file). A module *uses* another when a path written in it leads there: a `use` (its
//! groups expanded), or a path in the code that starts at `super`, `crate` or `self`
//! (`super::writer::Writer::new`). A path leads to the deepest module it names, and through the
//! imports of each module it passes: `super::Db`, written under a file that says `use db::Db;`,
//! leads to `db` (a re-export hides no dependency). A use of a module inside another counts as
//! a use between the two *siblings* whose subtrees hold them: `a::x` naming `crate::b::y` is
//! `a` using `b`. Two siblings that use each other are a pair, printed with one line of each
//! direction.
//!
//! What does not count: a parent using its child, or a child using its parent's own items
//! (`super::DynamoStore`, defined in `lib.rs`), which is how Rust lays a crate out; unit tests
//! and other `#[cfg(test)]` items, which may build their fixtures with a sibling's help; paths in
//! comments and strings; methods a sibling defines on a shared type (`self.flush_line_counts()`
//! on a `DynamoStore` whose `impl` blocks are spread over files), which no path names; and
//! longer loops (`a` uses `b`, `b` uses `c`, `c` uses `a`), which this check does not look for.
//!
//! A pair that remains is listed in [`REMAINING`] with a line of why; an entry that no longer
//! holds fails too, so the list only shrinks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::module_tree::{ModulePath, Tree};
use super::rust_paths::rooted_paths;

/// The pairs that remain, as (crate, module, module, why), the modules in the order the check
/// prints them (sorted). Remove a row once its pair is gone: the check fails on a stale one.
const REMAINING: &[(&str, &str, &str, &str)] = &[];

/// Where one module uses another: the file and line.
type Evidence = (PathBuf, usize);

/// Two sibling modules that use each other, with a line of each direction.
#[derive(Debug)]
pub struct Pair {
    /// The crate (its target, for a binary or a test).
    pub target: String,
    /// The first module, by path from the crate's root.
    pub a: String,
    /// The second.
    pub b: String,
    /// Where `a` uses `b`.
    pub a_uses_b: Evidence,
    /// Where `b` uses `a`.
    pub b_uses_a: Evidence,
}

/// `file` from the workspace's root, as the messages name it.
fn shown(file: &Path) -> String {
    let root = Path::new(super::WORKSPACE).canonicalize().unwrap();
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    file.strip_prefix(&root)
        .unwrap_or(&file)
        .display()
        .to_string()
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |(file, line): &Evidence| format!("{}:{line}", shown(file));
        write!(
            f,
            "{}: {} <-> {} ({} uses {} at {}; {} uses {} at {})",
            self.target,
            self.a,
            self.b,
            self.a,
            self.b,
            at(&self.a_uses_b),
            self.b,
            self.a,
            at(&self.b_uses_a),
        )
    }
}

/// The two siblings whose subtrees hold `from` and `to`; `None` when one holds the other.
fn siblings(from: &[String], to: &[String]) -> Option<(ModulePath, ModulePath)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((from[..=common].to_vec(), to[..=common].to_vec()))
}

/// Every use of one sibling by another in `tree`, with the first line that shows it.
fn sibling_uses(tree: &Tree) -> BTreeMap<(ModulePath, ModulePath), Evidence> {
    let mut uses = BTreeMap::new();
    for (path, module) in &tree.modules {
        let imported = module.imports.iter().map(|i| (i.path.clone(), i.line));
        for (written, line) in imported.chain(rooted_paths(&module.tokens)) {
            let Some(target) = tree.resolve(path, &written) else {
                continue;
            };
            if let Some(pair) = siblings(path, &target) {
                uses.entry(pair).or_insert((module.file.clone(), line));
            }
        }
    }
    uses
}

/// The pairs of sibling modules of the crate target `target` (rooted at `root`) that use each
/// other.
pub fn pairs(target: &str, root: &Path) -> Vec<Pair> {
    let uses = sibling_uses(&Tree::read(root));
    uses.iter()
        .filter(|((a, b), _)| a < b)
        .filter_map(|((a, b), a_uses_b)| {
            let b_uses_a = uses.get(&(b.clone(), a.clone()))?;
            Some(Pair {
                target: target.to_owned(),
                a: a.join("::"),
                b: b.join("::"),
                a_uses_b: a_uses_b.clone(),
                b_uses_a: b_uses_a.clone(),
            })
        })
        .collect()
}

/// Every target of the workspace's crates, as (name, root file): a library by its package's
/// name, any other target as `package:target`.
fn workspace_targets() -> Vec<(String, PathBuf)> {
    let metadata = super::workspace_metadata();
    let mut targets = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        for target in package["targets"].as_array().unwrap() {
            let library = target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "lib");
            let label = if library {
                name.to_owned()
            } else {
                format!("{name}:{}", target["name"].as_str().unwrap())
            };
            targets.push((label, PathBuf::from(target["src_path"].as_str().unwrap())));
        }
    }
    targets
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let targets = workspace_targets();
    assert!(
        targets.len() >= 10,
        "the workspace's targets were not found"
    );
    let found: Vec<Pair> = targets
        .iter()
        .flat_map(|(target, root)| pairs(target, root))
        .collect();
    let remains = |pair: &Pair| {
        REMAINING
            .iter()
            .any(|(t, a, b, _)| *t == pair.target && *a == pair.a && *b == pair.b)
    };
    let new: Vec<String> = found
        .iter()
        .filter(|pair| !remains(pair))
        .map(ToString::to_string)
        .collect();
    let gone: Vec<String> = REMAINING
        .iter()
        .filter(|(t, a, b, _)| {
            !found
                .iter()
                .any(|pair| pair.target == *t && pair.a == *a && pair.b == *b)
        })
        .map(|(t, a, b, _)| format!("{t}: {a} <-> {b}"))
        .collect();
    assert!(
        new.is_empty(),
        "modules that import each other (move what both need into a module of its own, or \
         have one hand the other what it needs):\n{}",
        new.join("\n")
    );
    assert!(
        gone.is_empty(),
        "pairs in REMAINING that no longer import each other; remove them:\n{}",
        gone.join("\n")
    );
}

/// Writes a crate of `files` (path, text) to a temporary folder and checks it.
fn pairs_of(files: &[(&str, &str)]) -> Vec<String> {
    let folder = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let file = folder.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    pairs("example", &folder.path().join("lib.rs"))
        .iter()
        .map(|pair| format!("{} <-> {}", pair.a, pair.b))
        .collect()
}

#[test]
fn the_check_sees_a_pair_through_a_re_export_and_a_nested_module() {
    let found = pairs_of(&[
        ("lib.rs", "mod a;\nmod b;\nuse b::Thing;\npub struct Root;"),
        ("a.rs", "mod inner;\nuse super::Thing;"),
        ("a/inner.rs", "fn f() { crate::b::g(); }"),
        ("b.rs", "pub struct Thing;\npub fn g() { super::a::h(); }"),
    ]);
    assert_eq!(found, ["a <-> b"]);
}

#[test]
fn a_parent_and_its_child_or_a_test_are_no_pair() {
    let found = pairs_of(&[
        ("lib.rs", "mod a;\nmod b;\nuse a::A;\npub struct Root;"),
        ("a.rs", "use super::Root;\nuse super::b::B;\npub struct A;"),
        (
            "b.rs",
            "pub struct B;\n#[cfg(test)]\nmod tests { use super::super::a::A; }",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}
