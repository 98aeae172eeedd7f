-- Schema version 6: prices and payments (issue 26). An event's price list (each section's seat
-- price and the currency, JSON; NULL when every seat is free) is read with its terms inside the
-- claim, which fixes a hold's amount due; a job keeps that amount and the reference of the
-- payment that sold it as one JSON value (NULL for free seats), so a payment is checked against
-- the job alone and the same payment reported twice is recognised.
ALTER TABLE events ADD COLUMN prices TEXT;
ALTER TABLE jobs ADD COLUMN payment TEXT;
