-- Line items against the totals. An invoice may apply allowances or charges to the whole
-- document (a discount, a deposit, freight: EN 16931 BG-20/BG-21) that appear in no line, so the
-- items legitimately differ from the net total by those; such amounts are a few per cent of the
-- net total. The error rule therefore allows 10 % (at least 0.02), which still catches a missed,
-- doubled or misread line of any size that matters; smaller differences are a warning.
-- Both rules apply only when every item has a line total (otherwise coverage reports the gap).

-- rule: line_items_sum_to_net_total
-- severity: error
-- fields: line_items.line_total, net_total
-- message: the line items do not add up to the net total: a line was missed, doubled or misread
WITH items AS (
    SELECT count(*) AS n, count(line_total) AS n_totals, sum(line_total) AS total FROM line_items
)
SELECT items.total AS actual, doc.net_total AS expected, items.total - doc.net_total AS difference,
       items.n AS items
FROM doc CROSS JOIN items
WHERE items.n > 0 AND items.n_totals = items.n
  AND abs(items.total - doc.net_total) > greatest(0.02, 0.10 * abs(doc.net_total));

-- rule: line_items_reconcile_with_net_total
-- severity: warning
-- fields: line_items.line_total, net_total
-- message: the line items differ from the net total by more than rounding: document-level allowances or charges, or a misread line
WITH items AS (
    SELECT count(*) AS n, count(line_total) AS n_totals, sum(line_total) AS total FROM line_items
)
SELECT items.total AS actual, doc.net_total AS expected, items.total - doc.net_total AS difference
FROM doc CROSS JOIN items
WHERE items.n > 0 AND items.n_totals = items.n
  AND abs(items.total - doc.net_total) > 0.02
  AND abs(items.total - doc.net_total) <= greatest(0.02, 0.10 * abs(doc.net_total));

-- rule: line_total_is_quantity_times_unit_price
-- severity: warning
-- fields: line_items.line_total, line_items.quantity, line_items.unit_price
-- message: line total differs from quantity times unit price: a line discount, a price per 100 or 1000 units, or a misread number
SELECT idx, 'line_items[' || idx || '].line_total' AS field,
       line_total AS actual, round(quantity * unit_price, 2) AS expected, quantity, unit_price
FROM line_items
WHERE abs(quantity * unit_price - line_total) > greatest(0.02, 0.005 * abs(line_total));
