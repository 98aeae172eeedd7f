#!/usr/bin/env python3
"""Smoke test for the local AWS emulator started by tests/emulator/start.sh.

    eval "$(tests/emulator/start.sh)"
    "${SEATCLAIM_MOTO_VENV:-$HOME/.cache/seatclaim/moto-venv}/bin/python" tests/emulator/smoke.py

Needs boto3 (installed with moto in the venv) and AWS_ENDPOINT_URL etc. from
start.sh. Checks SQS (both wire protocols), DynamoDB conditional-write
atomicity under contention, EventBridge, and that an SQS long poll does not
hold up DynamoDB. Exits non-zero on the first failed check.

--dynamodb-only runs only the contention check (e.g. against a bare
`moto_server` to see the race the launcher's lock removes).
"""

import argparse
import os
import sys
import threading
import time
import uuid
from urllib.parse import urlparse

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.credentials
from botocore.config import Config

ROUNDS = 50
CONTENDERS = 50

ENDPOINT = os.environ.get("AWS_ENDPOINT_URL", "")
# boto3 reads AWS_DEFAULT_REGION, not AWS_REGION (the Rust SDK reads AWS_REGION):
# pass the region explicitly so either variable works.
REGION = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
RUN = uuid.uuid4().hex[:8]  # unique names, so reruns against a reused server work


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def client(service, **config):
    return boto3.client(
        service,
        endpoint_url=ENDPOINT,
        region_name=REGION,
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, **config),
    )


def check_sqs():
    sqs = client("sqs")
    seen_headers = []

    def record(request, **_):
        def header(name):
            v = request.headers.get(name)
            return v.decode() if isinstance(v, bytes) else v

        seen_headers.append((header("X-Amz-Target"), header("Content-Type")))

    sqs.meta.events.register("before-send.sqs.*", record)

    name = f"smoke-{RUN}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    print(f"sqs: QueueUrl = {url}")
    want = f"{ENDPOINT.rstrip('/')}/123456789012/{name}"
    if url != want:
        fail(f"QueueUrl {url!r}, expected {want!r}")

    sqs.send_message(QueueUrl=url, MessageBody="hello from smoke")
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, MaxNumberOfMessages=1)
    msgs = got.get("Messages", [])
    if len(msgs) != 1 or msgs[0]["Body"] != "hello from smoke":
        fail(f"receive_message returned {got!r}")
    sqs.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])

    target, ctype = seen_headers[0]
    print(f"sqs: boto3 {boto3.__version__} sends X-Amz-Target={target!r}, Content-Type={ctype!r}")
    if not (target or "").startswith("AmazonSQS."):
        fail("expected boto3 to use the SQS JSON protocol (X-Amz-Target: AmazonSQS.*)")
    print("sqs: JSON protocol create/send/receive/delete ok")

    # The older query protocol (form-encoded Action=..., XML reply): older SDKs
    # send this. Hand-sign a request, since boto3 no longer speaks it for SQS.
    body = f"Action=GetQueueUrl&QueueName={name}&Version=2012-11-05"
    req = botocore.awsrequest.AWSRequest(
        method="POST",
        url=ENDPOINT.rstrip("/") + "/",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    creds = botocore.credentials.Credentials(
        os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
    )
    botocore.auth.SigV4Auth(creds, "sqs", REGION).add_auth(req)
    prepared = req.prepare()
    import urllib.request

    with urllib.request.urlopen(
        urllib.request.Request(prepared.url, data=body.encode(), headers=dict(prepared.headers)),
        timeout=10,
    ) as r:
        reply = r.read().decode()
    if "<GetQueueUrlResponse" not in reply or f"<QueueUrl>{url}</QueueUrl>" not in reply:
        fail(f"query-protocol GetQueueUrl replied {reply!r}")
    print("sqs: query protocol (Action=GetQueueUrl, XML reply) ok")
    return url


def create_table(ddb, name):
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.get_waiter("table_exists").wait(TableName=name)


def check_dynamodb_contention():
    ddb = client("dynamodb", max_pool_connections=CONTENDERS)
    table = f"smoke-claims-{RUN}"
    create_table(ddb, table)

    bad_rounds = []
    t0 = time.monotonic()
    for rnd in range(ROUNDS):
        key = f"seat-{rnd}"
        barrier = threading.Barrier(CONTENDERS)
        winners, losers, errors = [], [], []
        lock = threading.Lock()

        def contend(who):
            barrier.wait()
            try:
                ddb.put_item(
                    TableName=table,
                    Item={"pk": {"S": key}, "holder": {"S": who}},
                    ConditionExpression="attribute_not_exists(pk)",
                )
                out = winners
            except ddb.exceptions.ConditionalCheckFailedException:
                out = losers
            except Exception as e:  # noqa: BLE001 - report anything else
                out = errors
                who = f"{who}: {e!r}"
            with lock:
                out.append(who)

        threads = [
            threading.Thread(target=contend, args=(f"c{i}",)) for i in range(CONTENDERS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        stored = ddb.get_item(TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True)
        holder = stored.get("Item", {}).get("holder", {}).get("S")
        ok = len(winners) == 1 and not errors and holder == winners[0]
        if not ok:
            bad_rounds.append(rnd)
        print(
            f"dynamodb: round {rnd:2d}: winners={len(winners)} losers={len(losers)} "
            f"errors={len(errors)} stored holder={holder}"
            + ("" if ok else f"  <-- BAD winners={winners} errors={errors[:3]}"),
            flush=True,
        )
    elapsed = time.monotonic() - t0
    print(
        f"dynamodb: {ROUNDS} rounds x {CONTENDERS} concurrent conditional PutItem: "
        f"{ROUNDS - len(bad_rounds)} rounds with exactly one winner, "
        f"{len(bad_rounds)} bad, {elapsed:.1f} s"
    )
    if bad_rounds:
        fail(f"rounds without exactly one winner: {bad_rounds}")
    return table


def check_long_poll_does_not_block_dynamodb(queue_url, table):
    """An SQS long poll must not hold the DynamoDB lock (nor any global lock)."""
    sqs = client("sqs", read_timeout=30)
    ddb = client("dynamodb")
    wait_s = 5
    done = {}

    def poll():
        t = time.monotonic()
        sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=wait_s)
        done["poll_s"] = time.monotonic() - t

    th = threading.Thread(target=poll)
    th.start()
    time.sleep(0.5)  # let the poll reach the server and start waiting
    t = time.monotonic()
    for i in range(10):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"during-poll-{i}"}})
    ddb_s = time.monotonic() - t
    th.join()
    print(
        f"concurrency: 10 PutItem took {ddb_s:.2f} s while a {wait_s} s SQS long poll "
        f"was open (poll returned after {done.get('poll_s', -1):.1f} s)"
    )
    if ddb_s > 2:
        fail("DynamoDB was blocked behind an SQS long poll")


def check_eventbridge():
    events = client("events")
    bus = f"smoke-bus-{RUN}"
    arn = events.create_event_bus(Name=bus)["EventBusArn"]
    print(f"events: created bus {arn}")
    resp = events.put_events(
        Entries=[
            {
                "EventBusName": bus,
                "Source": "seatclaim.smoke",
                "DetailType": "SeatClaimed",
                "Detail": '{"seat": "A1"}',
            }
        ]
    )
    if resp.get("FailedEntryCount") != 0 or not resp["Entries"][0].get("EventId"):
        fail(f"put_events returned {resp!r}")
    print(f"events: PutEvents ok, EventId={resp['Entries'][0]['EventId']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dynamodb-only", action="store_true")
    args = ap.parse_args()

    if not ENDPOINT:
        fail("AWS_ENDPOINT_URL is not set; run: eval \"$(tests/emulator/start.sh)\"")
    host = urlparse(ENDPOINT).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        fail(f"refusing to run against non-local endpoint {ENDPOINT}")
    print(f"endpoint {ENDPOINT}, region {REGION}")

    if args.dynamodb_only:
        check_dynamodb_contention()
    else:
        queue_url = check_sqs()
        table = check_dynamodb_contention()
        check_long_poll_does_not_block_dynamodb(queue_url, table)
        check_eventbridge()
    print("smoke: all checks passed")


if __name__ == "__main__":
    main()
