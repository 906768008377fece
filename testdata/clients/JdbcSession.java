// pgjdbc session of the client suite (clienttest.TestJDBC), against the
// driver from Debian's libpostgresql-jdbc-java (42.x):
//
//   javac -d OUT JdbcSession.java
//   java -Duser.timezone=UTC -cp /usr/share/java/postgresql.jar:OUT JdbcSession
//
// Connection settings come from PGHOST, PGPORT, PGDATABASE, PGUSER,
// PGPASSWORD and PGSSLMODE. Every step starts with a line "=== NAME" and
// runs on its own: an error prints "ERROR <SQLSTATE>" (compared) and
// "# <message>" (shown, not compared), rolls back or reconnects, and the
// next step goes on. Lines starting with "# " are never compared.
import java.math.BigDecimal;
import java.sql.*;
import java.util.*;

public class JdbcSession {
    static Connection conn;

    interface Body { void run() throws Exception; }

    static String env(String k, String d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : v;
    }

    static Connection connect() throws SQLException {
        String url = "jdbc:postgresql://" + env("PGHOST", "127.0.0.1") + ":" + env("PGPORT", "5432") + "/" + env("PGDATABASE", "postgres");
        Properties p = new Properties();
        p.setProperty("user", env("PGUSER", "postgres"));
        p.setProperty("password", env("PGPASSWORD", ""));
        p.setProperty("sslmode", env("PGSSLMODE", "prefer"));
        return DriverManager.getConnection(url, p);
    }

    static void step(String name, Body body) {
        System.out.println("=== " + name);
        try {
            body.run();
        } catch (SQLException e) {
            System.out.println("ERROR " + e.getSQLState());
            System.out.println("# " + oneLine(e.getMessage()));
            recover();
        } catch (Exception e) {
            System.out.println("EXCEPTION " + e.getClass().getName());
            System.out.println("# " + oneLine(String.valueOf(e.getMessage())));
            recover();
        }
    }

    // recover leaves a usable autocommit connection for the next step.
    static void recover() {
        try {
            if (conn != null && !conn.isClosed() && conn.isValid(5)) {
                if (!conn.getAutoCommit()) {
                    conn.rollback();
                    conn.setAutoCommit(true);
                }
                return;
            }
        } catch (Exception e) {
            System.out.println("# recover: " + oneLine(String.valueOf(e.getMessage())));
        }
        try {
            if (conn != null) conn.close();
        } catch (Exception e) { /* the connection is gone already */ }
        try {
            conn = connect();
            System.out.println("# reconnected");
        } catch (Exception e) {
            System.out.println("# reconnect failed: " + oneLine(String.valueOf(e.getMessage())));
        }
    }

    static String oneLine(String s) {
        return s.replace('\n', ' ');
    }

    // dump prints a result set: the column labels, then one line per row
    // with every value as getString returns it.
    static void dump(ResultSet rs) throws SQLException {
        dump(rs, null, null);
    }

    // dump with a filter: only rows whose column `col` is in `keep`.
    static void dump(ResultSet rs, String col, Set<String> keep) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        StringBuilder h = new StringBuilder();
        for (int i = 1; i <= md.getColumnCount(); i++) h.append(i > 1 ? " | " : "").append(md.getColumnLabel(i));
        System.out.println(h);
        List<String> rows = new ArrayList<>();
        int all = 0;
        while (rs.next()) {
            all++;
            if (col != null && !keep.contains(rs.getString(col))) continue;
            StringBuilder r = new StringBuilder();
            for (int i = 1; i <= md.getColumnCount(); i++) r.append(i > 1 ? " | " : "").append(rs.getString(i));
            rows.add(r.toString());
        }
        rs.close();
        if (col != null) Collections.sort(rows);
        for (String r : rows) System.out.println(r);
        System.out.println("(" + rows.size() + " rows)");
        if (col != null) System.out.println("# " + all + " rows before the filter");
    }

    // typed prints each row with the Java class getObject returns, which
    // shows whether a value arrived as the type the driver expects.
    static void typed(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        while (rs.next()) {
            StringBuilder r = new StringBuilder();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                Object o = rs.getObject(i);
                r.append(i > 1 ? " | " : "").append(rs.getString(i)).append(" (").append(o == null ? "null" : o.getClass().getSimpleName()).append(")");
            }
            System.out.println(r);
        }
        rs.close();
    }

    static int count(String sql) throws SQLException {
        try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    public static void main(String[] args) throws Exception {
        step("connect", () -> {
            conn = connect();
            DatabaseMetaData md = conn.getMetaData();
            System.out.println("product: " + md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion());
            System.out.println("# version: " + md.getDatabaseProductVersion() + ", driver " + md.getDriverVersion());
            System.out.println("user: " + md.getUserName());
            System.out.println("autocommit: " + conn.getAutoCommit() + ", readOnly: " + conn.isReadOnly());
        });
        if (conn == null) return; // nothing else can run

        // pgjdbc asks the server: SHOW TRANSACTION ISOLATION LEVEL.
        step("getTransactionIsolation", () -> System.out.println("isolation: " + conn.getTransactionIsolation()));

        step("current_database, current_user, current_schema", () -> {
            try (Statement s = conn.createStatement()) {
                dump(s.executeQuery("SELECT current_database(), current_user, current_schema()"));
            }
        });

        step("Statement.executeQuery", () -> {
            try (Statement s = conn.createStatement()) {
                typed(s.executeQuery("SELECT id, name, email, created_at FROM customers ORDER BY id"));
            }
        });

        step("Statement.executeUpdate", () -> {
            try (Statement s = conn.createStatement()) {
                System.out.println("updated: " + s.executeUpdate("UPDATE customers SET name = name WHERE id = 1"));
                System.out.println("execute: " + s.execute("SELECT 1") + ", then: " + s.execute("DELETE FROM orders WHERE order_id < 0") + " " + s.getUpdateCount());
            }
        });

        // pgjdbc runs the first four executions unnamed with text results;
        // from the 5th (prepareThreshold) it parses a named statement S_n and
        // asks for binary int4, numeric and timestamp results, and from the
        // 6th it binds it without a Describe. int4 and numeric parameters are
        // binary from the first execution; setTimestamp's type is left to
        // the server (0).
        step("PreparedStatement x6 (binary parameters and results)", () -> {
            String sql = "SELECT o.order_id, o.amount, o.ordered_at, c.name, c.created_at FROM orders o JOIN customers c ON c.id = o.customer_id "
                       + "WHERE o.customer_id = ? AND c.name <> ? AND o.ordered_at > ? AND o.amount >= ? ORDER BY o.order_id";
            try (PreparedStatement ps = conn.prepareStatement(sql)) {
                for (int i = 1; i <= 6; i++) {
                    ps.setInt(1, 1);
                    ps.setString(2, "nobody");
                    ps.setTimestamp(3, Timestamp.valueOf("2023-12-31 00:00:00"));
                    ps.setBigDecimal(4, new BigDecimal("1.50"));
                    System.out.println("execution " + i + ":");
                    typed(ps.executeQuery());
                }
            }
        });

        step("PreparedStatement x6 (more types)", () -> {
            String sql = "SELECT CAST(? AS bigint) AS l, CAST(? AS double precision) AS d, CAST(? AS boolean) AS b, "
                       + "CAST(? AS date) AS dt, CAST(? AS text) AS n, CAST(? AS smallint) AS s";
            try (PreparedStatement ps = conn.prepareStatement(sql)) {
                for (int i = 1; i <= 6; i++) {
                    ps.setLong(1, 9000000000L + i);
                    ps.setDouble(2, 2.5 * i);
                    ps.setBoolean(3, i % 2 == 0);
                    ps.setDate(4, java.sql.Date.valueOf("2024-02-0" + i));
                    ps.setNull(5, Types.VARCHAR);
                    ps.setShort(6, (short) -i);
                    System.out.println("execution " + i + ":");
                    typed(ps.executeQuery());
                }
            }
        });

        step("PreparedStatement executeUpdate x6 + rollback", () -> {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement("UPDATE orders SET note = ? WHERE order_id = ?")) {
                for (int i = 1; i <= 6; i++) {
                    ps.setString(1, "note " + i);
                    ps.setInt(2, (i - 1) % 4 + 1);
                    System.out.println("execution " + i + ": " + ps.executeUpdate());
                }
            }
            try (Statement s = conn.createStatement()) {
                dump(s.executeQuery("SELECT order_id, note FROM orders ORDER BY order_id"));
            }
            conn.rollback();
            conn.setAutoCommit(true);
            try (Statement s = conn.createStatement()) {
                dump(s.executeQuery("SELECT order_id, note FROM orders ORDER BY order_id"));
            }
        });

        step("ResultSetMetaData", () -> {
            try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT c.id, c.name, c.email, c.created_at, o.amount, o.ordered_at, 1+1 AS two FROM customers c LEFT JOIN orders o ON o.customer_id = c.id")) {
                ResultSetMetaData rm = rs.getMetaData();
                for (int i = 1; i <= rm.getColumnCount(); i++) {
                    System.out.println(rm.getColumnName(i) + " label=" + rm.getColumnLabel(i) + " type=" + rm.getColumnType(i) + "/" + rm.getColumnTypeName(i)
                        + " class=" + rm.getColumnClassName(i) + " table=" + rm.getTableName(i) + " schema=" + rm.getSchemaName(i)
                        + " catalog=" + rm.getCatalogName(i) + " nullable=" + rm.isNullable(i) + " autoinc=" + rm.isAutoIncrement(i)
                        + " prec=" + rm.getPrecision(i) + " scale=" + rm.getScale(i) + " size=" + rm.getColumnDisplaySize(i)
                        + " signed=" + rm.isSigned(i) + " caseSensitive=" + rm.isCaseSensitive(i) + " searchable=" + rm.isSearchable(i)
                        + " currency=" + rm.isCurrency(i) + " readOnly=" + rm.isReadOnly(i) + " writable=" + rm.isWritable(i));
                }
            }
        });

        step("getTables(TABLE, VIEW, MATERIALIZED VIEW)", () ->
            dump(conn.getMetaData().getTables(null, "public", "%", new String[]{"TABLE", "VIEW", "MATERIALIZED VIEW"})));
        step("getTables(all types)", () -> dump(conn.getMetaData().getTables(null, "public", "%", null)));
        step("getColumns(customers)", () -> dump(conn.getMetaData().getColumns(null, "public", "customers", "%")));
        step("getColumns(sales_by_customer)", () -> dump(conn.getMetaData().getColumns(null, "public", "sales_by_customer", "%")));
        step("getPrimaryKeys(customers)", () -> dump(conn.getMetaData().getPrimaryKeys(null, "public", "customers")));
        step("getIndexInfo(customers)", () -> dump(conn.getMetaData().getIndexInfo(null, "public", "customers", false, true)));
        step("getSchemas", () -> dump(conn.getMetaData().getSchemas()));
        step("getCatalogs", () -> dump(conn.getMetaData().getCatalogs()));
        step("getTableTypes", () -> dump(conn.getMetaData().getTableTypes()));
        // PostgreSQL has some 600 types, mvserver the ones it implements:
        // compare the common built-ins (and two array types) only.
        step("getTypeInfo", () -> dump(conn.getMetaData().getTypeInfo(), "TYPE_NAME", Set.of(
            "bool", "bytea", "int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "bpchar",
            "date", "timestamp", "timestamptz", "interval", "json", "oid", "name", "_int4", "_text")));

        step("isValid", () -> System.out.println("valid: " + conn.isValid(5)));

        step("transactions: commit and rollback", () -> {
            conn.setAutoCommit(false);
            try (Statement s = conn.createStatement()) {
                s.executeUpdate("INSERT INTO customers (id, name, created_at) VALUES (10, 'dave', '2024-05-01 00:00:00+00')");
                System.out.println("inside: " + count("SELECT count(*) FROM customers"));
                conn.rollback();
                System.out.println("after rollback: " + count("SELECT count(*) FROM customers"));
                s.executeUpdate("INSERT INTO customers (id, name, created_at) VALUES (11, 'erin', '2024-05-02 00:00:00+00')");
                conn.commit();
                System.out.println("after commit: " + count("SELECT count(*) FROM customers"));
                s.executeUpdate("DELETE FROM customers WHERE id = 11");
                conn.commit();
                System.out.println("after delete: " + count("SELECT count(*) FROM customers"));
            }
            conn.setAutoCommit(true);
        });

        step("transactions: error inside, then rollback", () -> {
            conn.setAutoCommit(false);
            try (Statement s = conn.createStatement()) {
                s.executeUpdate("INSERT INTO customers (id, name, created_at) VALUES (12, 'frank', '2024-05-03 00:00:00+00')");
                try {
                    s.executeQuery("SELECT 1/0").close();
                } catch (SQLException e) {
                    System.out.println("error: " + e.getSQLState());
                }
                try {
                    s.executeQuery("SELECT 1").close();
                } catch (SQLException e) {
                    System.out.println("in the failed transaction: " + e.getSQLState());
                }
                conn.rollback();
                System.out.println("after rollback: " + count("SELECT count(*) FROM customers"));
            }
            conn.setAutoCommit(true);
        });

        // A fetch size inside a transaction makes pgjdbc read through a
        // portal, two rows per Execute (portal suspension).
        step("setFetchSize(2) in a transaction", () -> {
            conn.setAutoCommit(false);
            try (Statement s = conn.createStatement()) {
                s.setFetchSize(2);
                dump(s.executeQuery("SELECT order_id, amount FROM orders ORDER BY order_id"));
            }
            conn.commit();
            conn.setAutoCommit(true);
        });

        // RETURN_GENERATED_KEYS appends RETURNING * to the INSERT.
        step("getGeneratedKeys", () -> {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement(
                    "INSERT INTO customers (id, name, email, created_at) VALUES (?, ?, ?, '2024-06-01 00:00:00+00')", Statement.RETURN_GENERATED_KEYS)) {
                ps.setInt(1, 20);
                ps.setString(2, "gina");
                ps.setNull(3, Types.VARCHAR);
                System.out.println("inserted: " + ps.executeUpdate());
                dump(ps.getGeneratedKeys());
            }
            conn.rollback();
            conn.setAutoCommit(true);
        });

        step("error, then the connection goes on", () -> {
            try (Statement s = conn.createStatement()) {
                try {
                    s.executeQuery("SELECT * FROM no_such_table").close();
                } catch (SQLException e) {
                    System.out.println("error: " + e.getSQLState());
                }
                dump(s.executeQuery("SELECT count(*) AS n FROM orders"));
            }
        });

        step("close", () -> {
            conn.close();
            System.out.println("closed: " + conn.isClosed());
        });
    }
}
