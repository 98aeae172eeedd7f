#!/usr/bin/env bash
# The AWS backend's capacity model, measured: starts the emulators (DynamoDB Local and moto, as
# the test suite does), builds the capacity tool in release mode and runs it with the target sale
# (16,700 intents/s on one event of 100,000 seats, 10% of buyers on 10 hot seats). Writes
# deploy/capacity.json and prints the tables docs/capacity.md quotes. Extra arguments go to the
# tool (`--help` lists them). Takes 20 to 40 minutes on a 2-core machine: the emulators are slow,
# the figures are per intent and do not depend on their speed.
set -euo pipefail
cd "$(dirname "$0")/../.."

eval "$(bash tests/emulator/start.sh)"
cargo build --release --locked -p seatclaim-e2e --bin seatclaim-capacity
target/release/seatclaim-capacity "$@"
