//! Durable folder entries: a file created or renamed in a folder is not on disk after a power cut
//! until the folder itself is synced, whatever was synced inside the file. The backup's rename
//! and the event log's creation and rotation both need it.

use std::fs::File;
use std::path::Path;

/// Syncs the folder that holds `path` (the working folder for a bare file name).
pub(super) fn sync_folder(path: &Path) -> std::io::Result<()> {
    let folder = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    File::open(folder)?.sync_all()
}
