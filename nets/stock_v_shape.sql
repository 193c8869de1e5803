-- Oracle's V-shape (Data Warehousing Guide, "SQL for Pattern Matching", Example 20-1)
-- over the SASE stock stream: a price that falls, then rises, per symbol, within 1000 ticks.
--   petricep run nets/stock_v_shape.sql --events examples/data/stocks.csv --type stock --time-field ts --id-field id
SELECT *
FROM stock MATCH_RECOGNIZE (
     PARTITION BY symbol
     ORDER BY ts
     MEASURES  STRT.price AS top,
               LAST(DOWN.price) AS bottom,
               LAST(UP.price) AS recovered,
               COUNT(DOWN.*) AS falling
     ONE ROW PER MATCH
     AFTER MATCH SKIP TO LAST UP
     PATTERN (STRT DOWN+ UP+)
     DEFINE
        DOWN AS DOWN.price < PREV(DOWN.price),
        UP AS UP.price > PREV(UP.price)
     WITHIN 1000
     ) AS v_shape;
