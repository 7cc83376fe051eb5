-- Invoice totals. Amounts are compared with a tolerance of 0.02: every printed total is rounded
-- to the cent on its own (and tax is often rounded per rate), so a correct invoice can differ
-- from the exact sum by a cent either way.

-- rule: gross_equals_net_plus_tax
-- severity: error
-- fields: gross_total, net_total, tax_total
-- message: gross total must equal net total plus tax total
SELECT gross_total AS actual, net_total + tax_total AS expected, net_total, tax_total
FROM doc
WHERE abs(gross_total - (net_total + tax_total)) > 0.02;

-- rule: negative_totals
-- severity: warning
-- fields: gross_total, net_total
-- message: a total is negative: right for a credit note or an invoice correction, otherwise a sign was misread
SELECT gross_total AS actual, net_total
FROM doc
WHERE gross_total < 0 OR net_total < 0;

-- rule: tax_rate_plausible
-- severity: warning
-- fields: tax_total, net_total
-- message: tax is not between 0 % and 30 % of the net total (no VAT or sales tax rate is higher), or has the opposite sign
SELECT tax_total AS actual, net_total, round(100 * tax_total / net_total, 2) AS rate_percent
FROM doc
WHERE net_total <> 0
  AND (tax_total / net_total < 0 OR tax_total / net_total > 0.30);

-- rule: tax_below_gross_total
-- severity: error
-- fields: tax_total, gross_total
-- message: the tax is as large as the gross total: the tax cannot exceed what it is part of, so one of the two amounts was read from the wrong place
SELECT tax_total AS actual, gross_total AS expected
FROM doc
WHERE gross_total <> 0 AND abs(tax_total) >= abs(gross_total);
