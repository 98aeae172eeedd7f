//! The cheapest durable store a server could have, for `seatclaim-bench bare --durable`: each
//! request's body appended to one file by one thread, which writes every line queued while the
//! last `fdatasync` ran with one `write` and one `fdatasync`, and only then answers them (group
//! commit, as seatclaim's writer and Redis's `appendfsync always` do), gathering for a moment
//! before a small group while lines come faster than groups, by the rule seatclaim's writer
//! uses. It keeps no index and no state, so the server that uses it is the floor under any design
//! that answers only after its request is on disk.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::oneshot;

/// How long a small group waits for more lines, as seatclaim's writer's `GATHER_WINDOW`.
const GATHER_WINDOW: Duration = Duration::from_millis(1);

/// A group that finds this many lines queued starts at once (seatclaim's `GATHER_ENOUGH`).
const GATHER_ENOUGH: usize = 32;

/// A line to append and the caller waiting for it to be durable.
type Queued = (Vec<u8>, oneshot::Sender<std::io::Result<()>>);

/// The log's queue; its thread stops once the last clone is dropped.
#[derive(Clone)]
pub(crate) struct DurableLog {
    queue: mpsc::Sender<Queued>,
}

impl DurableLog {
    /// Creates (or truncates) the file at `path` and starts the thread that appends to it.
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let file = File::create(path)?;
        let (queue, incoming) = mpsc::channel::<Queued>();
        std::thread::Builder::new()
            .name("bare-log".into())
            .spawn(move || serve(file, &incoming))?;
        Ok(Self { queue })
    }

    /// Appends `line` (a newline is added) and returns once it has been flushed to the disk.
    pub(crate) async fn append(&self, mut line: Vec<u8>) -> std::io::Result<()> {
        line.push(b'\n');
        let (reply, durable) = oneshot::channel();
        self.queue
            .send((line, reply))
            .map_err(|_| std::io::Error::other("the log has stopped"))?;
        durable
            .await
            .map_err(|_| std::io::Error::other("the log has stopped"))?
    }
}

/// Writes and syncs one group at a time until every sender is gone.
fn serve(mut file: File, incoming: &mpsc::Receiver<Queued>) {
    let (mut buffer, mut previous) = (Vec::new(), 0);
    while let Ok(first) = incoming.recv() {
        let mut group: Vec<Queued> = std::iter::once(first).chain(incoming.try_iter()).collect();
        if previous > 1 && group.len() < GATHER_ENOUGH {
            std::thread::sleep(GATHER_WINDOW);
            group.extend(incoming.try_iter());
        }
        previous = group.len();
        buffer.clear();
        for (line, _) in &group {
            buffer.extend_from_slice(line);
        }
        let written = file.write_all(&buffer).and_then(|()| file.sync_data());
        for (_, reply) in group {
            let answer = match &written {
                Ok(()) => Ok(()),
                Err(error) => Err(std::io::Error::new(error.kind(), error.to_string())),
            };
            let _ = reply.send(answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line is in the file once its append has returned, exactly once, whole, however
    /// many callers append at once (they share groups).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_append_returns_once_its_line_is_in_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("log");
        let log = DurableLog::open(&path).expect("open");
        let appends: Vec<_> = (0..200)
            .map(|n| {
                let (log, path) = (log.clone(), path.clone());
                tokio::spawn(async move {
                    let line = format!("{{\"n\": {n}}}");
                    log.append(line.clone().into_bytes()).await.expect("append");
                    let written = std::fs::read_to_string(&path).expect("read");
                    assert!(written.lines().any(|l| l == line), "{line} is in the file");
                })
            })
            .collect();
        for append in appends {
            append.await.expect("task");
        }
        let written = std::fs::read_to_string(&path).expect("read");
        let mut lines: Vec<&str> = written.lines().collect();
        lines.sort_unstable();
        let mut expected: Vec<String> = (0..200).map(|n| format!("{{\"n\": {n}}}")).collect();
        expected.sort_unstable();
        assert_eq!(lines, expected);
    }
}
