//! The pages name only what exists. Every repository path and Rust symbol that README.md,
//! ARCHITECTURE.md, deploy/README.md and docs/*.md name in backticks, and every page a link of
//! theirs points to, is looked up in the workspace: a rename that leaves a page behind fails
//! here, naming the page, the line and the reference.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod references;
mod workspace;

use std::path::Path;

use seatclaim_core::domain::ReasonCode;

use references::{Reference, is_rooted, references};
use workspace::Workspace;

/// The repository's root.
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// What is wrong with `reference` from a page in `folder` (`Some(Ok(()))` when nothing), or
/// `None` when it is another crate's symbol, which this check does not follow.
fn verdict(
    reference: &Reference,
    folder: &Path,
    workspace: &Workspace,
) -> Option<Result<(), String>> {
    let found = match reference {
        Reference::Path(path) if is_rooted(path) => Path::new(WORKSPACE).join(path).exists(),
        Reference::Path(path) if path.contains('/') => {
            let tail = format!("/{path}");
            workspace
                .paths
                .iter()
                .any(|known| *known == *path || known.ends_with(&tail))
        }
        Reference::Path(name) => workspace.file_names.contains(name),
        Reference::Link(target) => folder.join(target).exists(),
        Reference::Symbol(symbol) => return symbol_verdict(symbol, workspace),
    };
    Some(if found {
        Ok(())
    } else {
        Err("no such file or folder".to_owned())
    })
}

/// Whether a Rust path's segments are defined: each but the last as a crate, a module or a
/// type, the last as anything; `None` for another crate's path, which this check does not follow.
fn symbol_verdict(symbol: &str, workspace: &Workspace) -> Option<Result<(), String>> {
    let segments: Vec<&str> = symbol.split("::").collect();
    let (last, heads) = segments.split_last().unwrap();
    let first = segments[0];
    if workspace.external.contains(first) && !workspace.namespaces.contains(first) {
        return None;
    }
    if let Some(head) = heads
        .iter()
        .find(|head| !workspace.namespaces.contains(**head))
    {
        return Some(Err(format!("no crate, module or type is named {head}")));
    }
    Some(if workspace.names.contains(*last) {
        Ok(())
    } else {
        Err(format!("nothing in the code is named {last}"))
    })
}

/// Checks the page `name` (from the root), whose text is `page`: how many references it names
/// that this check follows, and each broken one as `page:line: reference (what is wrong)`.
fn check_page(name: &str, page: &str, workspace: &Workspace) -> (usize, Vec<String>) {
    let folder = Path::new(WORKSPACE)
        .join(name)
        .parent()
        .unwrap()
        .to_path_buf();
    let mut checked = 0;
    let mut broken = Vec::new();
    let mut found = references(page);
    found.sort_by_key(|(line, _)| *line);
    for (line, reference) in found {
        let Some(verdict) = verdict(&reference, &folder, workspace) else {
            continue;
        };
        checked += 1;
        if let Err(problem) = verdict {
            let (Reference::Path(text) | Reference::Symbol(text) | Reference::Link(text)) =
                &reference;
            broken.push(format!("{name}:{line}: {text} ({problem})"));
        }
    }
    (checked, broken)
}

/// The pages a reader starts from: the README, the architecture, the deployment's and docs/.
fn pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(Path::new(WORKSPACE).join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    pages.sort();
    ["README.md", "ARCHITECTURE.md", "deploy/README.md"]
        .into_iter()
        .map(str::to_owned)
        .chain(pages)
        .collect()
}

/// A reader follows the pages to the code: each path and symbol they name is there.
#[test]
fn every_path_and_symbol_the_pages_name_exists() {
    let workspace = workspace::scan();
    let mut checked = 0;
    let mut broken = Vec::new();
    for name in pages() {
        let page = std::fs::read_to_string(Path::new(WORKSPACE).join(&name)).unwrap();
        let (count, found) = check_page(&name, &page, &workspace);
        checked += count;
        broken.extend(found);
    }
    println!("{checked} references checked on {} pages", pages().len());
    assert!(
        broken.is_empty(),
        "the pages name what does not exist (fix the page, or the check if it misread one):\n{}",
        broken.join("\n")
    );
    assert!(checked >= 500, "the references were not found: {checked}");
}

/// The folders of `tests/` and of `tests/tests/`, each named in the code layout of
/// docs/design.md (its `tests/` row): a folder added to either joins the list.
#[test]
fn the_code_layout_names_every_folder_of_the_tests() {
    let design = std::fs::read_to_string(Path::new(WORKSPACE).join("docs/design.md")).unwrap();
    let row = design
        .lines()
        .find(|line| line.starts_with("| `tests/`"))
        .unwrap();
    let mut missing = Vec::new();
    for folder in ["tests", "tests/tests"] {
        for entry in std::fs::read_dir(Path::new(WORKSPACE).join(folder)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() && !row.contains(&format!("`{name}/`")) {
                missing.push(format!("{folder}/{name}/"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/design.md's `tests/` row does not name {missing:?}"
    );
}

/// docs/api.md's table of reason codes is the core's `ReasonCode` table: every code, in its
/// order, with its description; a code added, renamed or reworded leaves the page behind here.
#[test]
fn the_reason_codes_on_the_api_page_are_the_cores_table() {
    let page = std::fs::read_to_string(Path::new(WORKSPACE).join("docs/api.md")).unwrap();
    let section = page
        .split("\n## Reason codes\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/api.md has a section \"Reason codes\"");
    let rows: Vec<&str> = section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .collect();
    let table: Vec<String> = ReasonCode::ALL
        .iter()
        .map(|code| format!("| `{}` | {} |", code.as_str(), code.description()))
        .collect();
    assert_eq!(rows, table, "docs/api.md's reason codes");
}

/// The check can fail: on a made-up page it names each broken reference, and only those.
#[test]
fn the_docs_check_sees_a_broken_reference() {
    let page = "\
A rename leaves `shared/core/src/domain/nowhere.rs`, `domain::nowhere_rule` and `app/nowhere.rs`
behind, with `shared::domain::claim_one`, `ClaimOutcome::{Rejected, Nowhere}` and [a page](nowhere.md).
```sh
bash tests/nowhere.sh   # a code block's paths from the root are checked too
```
`Job::settle`, `app/decide.rs:12`, [the design](design.md#code-layout), `Prefer: wait`,
`GET /v1/jobs/{id}`, `shared/<name>/`, `Fn::If` and `tower::ServiceExt::oneshot` are fine.
";
    let (checked, broken) = check_page("docs/made-up.md", page, &workspace::scan());
    assert_eq!(
        broken,
        [
            "docs/made-up.md:1: shared/core/src/domain/nowhere.rs (no such file or folder)",
            "docs/made-up.md:1: domain::nowhere_rule (nothing in the code is named nowhere_rule)",
            "docs/made-up.md:1: app/nowhere.rs (no such file or folder)",
            "docs/made-up.md:2: shared::domain::claim_one (no crate, module or type is named shared)",
            "docs/made-up.md:2: ClaimOutcome::Nowhere (nothing in the code is named Nowhere)",
            "docs/made-up.md:2: nowhere.md (no such file or folder)",
            "docs/made-up.md:4: tests/nowhere.sh (no such file or folder)",
        ]
    );
    assert_eq!(checked, 11, "the references the check follows");
}
