-- Invoice dates.

-- rule: due_date_not_before_issue_date
-- severity: warning
-- fields: due_date, issue_date
-- message: due date is before the issue date: real on some corrections and prepaid invoices, otherwise a date was misread
SELECT due_date AS actual, issue_date
FROM doc
WHERE due_date < issue_date;

-- rule: issue_date_plausible
-- severity: warning
-- fields: issue_date
-- message: issue date is implausible
SELECT issue_date AS actual, current_date AS today,
       CASE WHEN issue_date > current_date
            THEN 'issue date lies more than a year in the future'
            ELSE 'issue date is before 1990: a two-digit year read in the wrong century?'
       END AS message
FROM doc
WHERE issue_date > current_date + 366 OR issue_date < DATE '1990-01-01';
