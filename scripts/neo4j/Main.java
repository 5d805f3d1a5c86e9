import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Runs an embedded Neo4j Community server for toolwarden's development and
 * tests: Bolt on 127.0.0.1 only, authentication on, the password of the
 * "neo4j" user set from the NEO4J_PASSWORD environment variable (never
 * argv, which other users can read). When the server is ready, the file
 * named by the third argument is written; SIGTERM shuts the server down
 * cleanly through the shutdown hook.
 *
 * Usage: java -cp CLASSPATH Main HOME_DIR BOLT_PORT READY_FILE
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Main HOME_DIR BOLT_PORT READY_FILE");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        Path ready = Path.of(args[2]).toAbsolutePath();
        String password = System.getenv("NEO4J_PASSWORD");
        if (password == null || password.length() < 8) {
            System.err.println("NEO4J_PASSWORD must be set to at least 8 characters");
            System.exit(2);
        }
        Files.deleteIfExists(ready);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, 64L * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(ready);
            } catch (Exception ignored) {
                // The scripts treat a stale ready file with a dead pid as stopped.
            }
            dbms.shutdown();
            System.err.println("neo4j: shut down");
        }, "neo4j-shutdown"));

        setPassword(dbms, password);

        Path tmp = ready.resolveSibling(ready.getFileName() + ".tmp");
        Files.writeString(tmp, "bolt://127.0.0.1:" + port + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
        System.err.println("neo4j: ready on bolt://127.0.0.1:" + port);
        Thread.currentThread().join();
    }

    /**
     * Sets the neo4j user's password. Embedded calls run with full rights, so
     * the system database accepts the change without logging in; the
     * password travels as a parameter. On a restart the password is usually
     * already set, which Neo4j reports as an error that is not one here.
     */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PLAINTEXT PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                throw e;
            }
        }
    }
}
