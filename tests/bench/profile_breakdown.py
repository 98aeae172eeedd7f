"""The breakdown tests/bench/profile.sh prints: a `perf script -F comm,ip,sym` dump of a DWARF
call-graph profile of the API, grouped by thread and by the parts of a decision a change of the
decision path moves. Each figure is the share of all samples whose stack holds the frame named
(so nested parts overlap: the commit is inside sqlite3_step)."""

import collections
import sys

# (label, thread or None for any, a substring of a frame's symbol)
PARTS = [
    ("writer thread", "seatclaim-write", None),
    ("  SQLite statements (sqlite3_step)", "seatclaim-write", "sqlite3_step"),
    ("    the commit (WAL frames, fsync, checkpoint)", "seatclaim-write", "sqlite3BtreeCommitPhaseOne"),
    ("      fsync", "seatclaim-write", "unixSync"),
    ("      checkpoint", "seatclaim-write", "sqlite3WalCheckpoint"),
    ("    index seeks", "seatclaim-write", "sqlite3BtreeIndexMoveto"),
    ("    inserts", "seatclaim-write", "sqlite3BtreeInsert"),
    ("    savepoints' statement journal", "seatclaim-write", "subjournalPage"),
    ("  the allocator", "seatclaim-write", "mi_"),
    ("async workers", "tokio-rt-worker", None),
    ("  TCP send (writev)", "tokio-rt-worker", "writev"),
    ("  HTTP head parsing", "tokio-rt-worker", "poll_read_head"),
    ("  JSON (serde_json)", "tokio-rt-worker", "serde_json"),
    ("  the reservation handler", "tokio-rt-worker", "Handler<"),
    ("  the allocator", "tokio-rt-worker", "mi_"),
]


def samples(path):
    """Each sample as (thread name, [frame symbols, innermost first])."""
    thread, frames = None, []
    for line in open(path, encoding="utf-8", errors="replace"):
        if not line.strip():
            if thread is not None:
                yield thread, frames
            thread, frames = None, []
        elif line[0] not in " \t":
            thread, frames = line.split()[0], []
        else:
            parts = line.strip().split(" ", 1)
            frames.append(parts[1] if len(parts) > 1 else "?")
    if thread is not None:
        yield thread, frames


def main(path):
    every = list(samples(path))
    if not every:
        sys.exit(f"{path}: no samples")
    threads = collections.Counter(thread for thread, _ in every)
    print(f"{len(every)} samples; by thread: {dict(threads)}")
    for label, thread, symbol in PARTS:
        hits = sum(
            1
            for name, frames in every
            if name == thread and (symbol is None or any(symbol in frame for frame in frames))
        )
        print(f"{label:50s} {100 * hits / len(every):5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
