//! What the pages may name: the repository's files and folders, and the names the workspace's
//! Rust code defines, read once per test.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::WORKSPACE;

/// The folders no page names: build output, installed modules, git's own.
const NOT_SOURCE: &[&str] = &["target", "node_modules", ".git"];

/// The item keywords whose next word is a name the code defines that other names sit under.
const NAMESPACES: &[&str] = &["mod", "struct", "enum", "trait", "type", "union"];

/// The item keywords whose next word is a name the code defines, under nothing.
const VALUES: &[&str] = &["fn", "const", "static", "macro_rules!"];

/// The repository's paths and the workspace's Rust names.
pub struct Workspace {
    /// Every file and folder, from the root, folders with a trailing `/`.
    pub paths: Vec<String>,
    /// Every file's name (`lines.rs`).
    pub file_names: HashSet<String>,
    /// Every item, field, variant, module (file or folder of Rust files) and crate the Rust code
    /// defines.
    pub names: HashSet<String>,
    /// The names of `names` that others sit under: crates, modules and types.
    pub namespaces: HashSet<String>,
    /// The crates of Cargo.lock and the standard library's: symbols of theirs are not followed.
    pub external: HashSet<String>,
}

/// Every file and folder under `dir` but build output, as paths from `root`.
fn walk(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if NOT_SOURCE.contains(&path.file_name().unwrap().to_string_lossy().as_ref()) {
            continue;
        }
        found.push(path.strip_prefix(root).unwrap().to_path_buf());
        if path.is_dir() {
            walk(root, &path, found);
        }
    }
}

/// Reads the workspace: its paths, the Rust names its code defines, the crates it uses.
pub fn scan() -> Workspace {
    let root = Path::new(WORKSPACE).canonicalize().unwrap();
    let mut found = Vec::new();
    walk(&root, &root, &mut found);
    let mut workspace = Workspace {
        paths: Vec::new(),
        file_names: HashSet::new(),
        names: HashSet::new(),
        namespaces: HashSet::new(),
        external: ["std", "core", "alloc"].map(str::to_owned).into(),
    };
    for path in found {
        let text = path.to_string_lossy().into_owned();
        if root.join(&path).is_dir() {
            workspace.paths.push(format!("{text}/"));
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".rs") {
            workspace.add_module(&path, &std::fs::read_to_string(root.join(&path)).unwrap());
        } else if name == "Cargo.toml" || name == "Cargo.lock" {
            let manifest = std::fs::read_to_string(root.join(&path)).unwrap();
            workspace.add_crates(&manifest, name == "Cargo.toml");
        }
        workspace.file_names.insert(name);
        workspace.paths.push(text);
    }
    let namespaces = workspace.namespaces.iter().cloned();
    workspace.names.extend(namespaces);
    workspace
}

impl Workspace {
    /// Adds the names a Rust file defines; the file, and the folder of its files (`step/`), are
    /// modules.
    fn add_module(&mut self, path: &Path, code: &str) {
        let module = path.file_stem().unwrap_or_default().to_string_lossy();
        let folder = path.parent().and_then(Path::file_name).unwrap_or_default();
        self.namespaces.insert(module.into_owned());
        self.namespaces
            .insert(folder.to_string_lossy().into_owned());
        define_names(code, &mut self.names, &mut self.namespaces);
    }

    /// Adds the crates a manifest names: the workspace's own (`seatclaim_core`), or from the lock
    /// file, the ones it depends on.
    fn add_crates(&mut self, manifest: &str, ours: bool) {
        let crates = manifest
            .lines()
            .filter_map(|line| line.strip_prefix("name = \""))
            .map(|name| name.trim_end_matches('"').replace('-', "_"));
        if ours {
            self.namespaces.extend(crates);
        } else {
            self.external.extend(crates);
        }
    }
}

/// A line of code without its visibility (`pub`, `pub(crate)`, `pub(super)`).
fn without_visibility(line: &str) -> &str {
    match line.strip_prefix("pub") {
        Some(rest) if rest.starts_with('(') => rest.split_once(") ").map_or(line, |(_, item)| item),
        Some(rest) if rest.starts_with(' ') => rest.trim_start(),
        _ => line,
    }
}

/// Adds the names `code` defines: items (`fn`, `struct`, ... `macro_rules!`), fields, and the
/// variants of its enums; modules and types to `namespaces` too. Rustfmt's layout is assumed:
/// one field or variant a line.
fn define_names(code: &str, names: &mut HashSet<String>, namespaces: &mut HashSet<String>) {
    // Inside an enum: how deep in its brackets; a variant starts at depth 1.
    let mut enum_depth: Option<i32> = None;
    for line in code.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
            .filter(|word| !word.is_empty())
            .collect();
        for pair in words.windows(2) {
            if NAMESPACES.contains(&pair[0]) {
                namespaces.insert(pair[1].to_owned());
            } else if VALUES.contains(&pair[0]) {
                names.insert(pair[1].to_owned());
            }
        }
        let item = without_visibility(line);
        if let Some((field, _)) = item
            .split_once(": ")
            .filter(|(name, _)| is_identifier(name))
        {
            names.insert(field.to_owned());
        }
        if enum_depth.is_none() && item.starts_with("enum ") {
            enum_depth = Some(0);
        }
        let Some(depth) = enum_depth.as_mut() else {
            continue;
        };
        let variant: String = line
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if *depth == 1 && !variant.is_empty() {
            names.insert(variant);
        }
        let opened = *depth > 0 || line.contains('{');
        *depth += i32::try_from(line.matches(['{', '(', '[']).count()).unwrap();
        *depth -= i32::try_from(line.matches(['}', ')', ']']).count()).unwrap();
        if opened && *depth <= 0 {
            enum_depth = None;
        }
    }
}

/// Whether `word` is one Rust identifier.
pub fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}
