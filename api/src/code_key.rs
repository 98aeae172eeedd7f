//! Where the key of access codes' hashes comes from: `SEATCLAIM_ACCESS_CODE_KEY`, or, on the
//! embedded backend without it, a random key made once and kept in the data folder beside the
//! SQLite file it protects (`access-code.key`, readable by its owner alone), so the zero-config
//! setup has codes too. On AWS without the setting, codes are off (their routes answer 503).

use std::io::Write;
use std::path::Path;

use seatclaim_core::domain::CodeKey;

/// The key file's name in the data folder.
const KEY_FILE: &str = "access-code.key";

/// The deployment's key: `setting`'s bytes; else the data folder's key (`data_dir`, the
/// embedded backend's), made now if there is none; else none.
pub fn load(setting: Option<&str>, data_dir: Option<&Path>) -> Result<Option<CodeKey>, String> {
    if let Some(text) = setting {
        return CodeKey::new(text.as_bytes().to_vec())
            .map(Some)
            .map_err(|e| e.to_string());
    }
    let Some(dir) = data_dir else {
        return Ok(None);
    };
    // Before the backend opens it on a first start, the folder may not exist yet.
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(KEY_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => made(&path)?,
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    let bytes =
        hex::decode(text.trim()).map_err(|e| format!("{} is not hex: {e}", path.display()))?;
    CodeKey::new(bytes).map(Some).map_err(|e| e.to_string())
}

/// A new random key written to `path` (readable by its owner alone); another process that
/// made it first wins, and its key is read instead.
fn made(path: &Path) -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the code key: {e}"))?;
    let text = hex::encode(bytes);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => {
            (file
                .write_all(text.as_bytes())
                .and_then(|()| file.sync_all()))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(text)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
        Err(error) => Err(format!("cannot create {}: {error}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_folders_key_is_made_once_and_kept() {
        // A folder that does not exist yet, as on a first start.
        let dir = std::env::temp_dir()
            .join(format!("seatclaim-code-key-{}", std::process::id()))
            .join("data");
        let first = load(None, Some(&dir)).unwrap().unwrap();
        let again = load(None, Some(&dir)).unwrap().unwrap();
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
        let event = seatclaim_core::domain::EventId::parse("e").unwrap();
        let code = seatclaim_core::domain::AccessCode::parse("FAN-1234").unwrap();
        assert_eq!(first.hash(&event, &code), again.hash(&event, &code));
        assert!(load(None, None).unwrap().is_none());
        assert!(load(Some("too short"), None).is_err());
    }
}
