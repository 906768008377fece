-- psql session of the client suite: run as `psql -X -v ON_ERROR_STOP=0 -f psql.sql`
-- against mvserver and the PostgreSQL oracle. Each "\echo === NAME" line
-- starts a step; the harness compares the two outputs step by step.
-- (Step names are quoted: an unquoted \\ would separate two commands.)
\echo '=== \\conninfo'
\conninfo
\echo '=== \\l'
\l
\echo '=== \\dn'
\dn
\echo '=== \\d'
\d
\echo '=== \\dt'
\dt
\echo '=== \\dt+'
\dt+
\echo '=== \\dv'
\dv
\echo '=== \\dm'
\dm
\echo '=== \\di'
\di
\echo '=== \\d customers'
\d customers
\echo '=== \\d+ customers'
\d+ customers
\echo '=== \\d orders'
\d orders
\echo '=== \\d big_orders'
\d big_orders
\echo '=== \\d+ big_orders'
\d+ big_orders
\echo '=== \\d sales_by_customer'
\d sales_by_customer
\echo '=== \\d+ sales_by_customer'
\d+ sales_by_customer
\echo '=== \\du'
\du
\echo '=== SELECT customers'
SELECT * FROM customers ORDER BY 1;
\echo '=== SELECT join'
SELECT c.name, count(o.order_id) AS orders, sum(o.amount) AS total
  FROM customers c LEFT JOIN orders o ON o.customer_id = c.id
  GROUP BY c.name ORDER BY c.name;
\echo '=== SELECT view'
SELECT * FROM big_orders ORDER BY order_id;
\echo '=== SELECT matview'
SELECT * FROM sales_by_customer ORDER BY customer_id;
\echo '=== SELECT error'
SELECT * FROM no_such_table;
\echo '=== \\x'
\x
SELECT * FROM customers ORDER BY 1;
\x
\echo '=== SELECT count'
SELECT count(*) FROM orders;
