-- The parties of an invoice. Seller and buyer are two different parties: when both fields hold
-- the same name, one of them was read from the other's block.

-- rule: seller_is_not_buyer
-- severity: error
-- fields: seller_name, buyer_name
-- message: seller and buyer have the same name: one of them was read from the other party's block
SELECT seller_name AS actual, buyer_name
FROM doc
WHERE lower(regexp_replace(seller_name, '\s+', '', 'g')) = lower(regexp_replace(buyer_name, '\s+', '', 'g'));
