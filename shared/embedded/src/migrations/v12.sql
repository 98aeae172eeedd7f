-- Schema version 12: a sale found by its payment (issue 37, item 4). A provider may report one
-- payment twice, the second time without naming the job (Stripe's payment_intent.succeeded after
-- the Checkout that sold the hold): the webhook looks the payment's reference up among the SOLD
-- jobs before it publishes it as unmatched for a refund. The index covers the references older
-- builds recorded (schema version 6's `payment` JSON) as well as new ones, and only sold jobs.
CREATE INDEX jobs_sold_by_payment ON jobs (json_extract(payment, '$.payment_ref'))
    WHERE status = 'SOLD' AND json_valid(payment);
