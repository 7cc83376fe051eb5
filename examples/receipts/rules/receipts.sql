-- Receipts. Both rules are warnings: real receipts print refunds with a negative total, and a
-- date a person should look at is no reason to hold a correct extraction back.

-- rule: total_positive
-- severity: warning
-- fields: total
-- message: total is zero or negative: right on a refund, otherwise the wrong amount was read
SELECT total AS actual
FROM doc
WHERE total <= 0;

-- rule: date_plausible
-- severity: warning
-- fields: date
-- message: receipt date is implausible
SELECT date AS actual, current_date AS today,
       CASE WHEN date > current_date
            THEN 'receipt date lies in the future'
            ELSE 'receipt date is before 1990: a two-digit year read in the wrong century?'
       END AS message
FROM doc
WHERE date > current_date + 1 OR date < DATE '1990-01-01';
