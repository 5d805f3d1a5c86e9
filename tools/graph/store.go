package graph

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/tracing"
	"go.opentelemetry.io/otel/attribute"
)

// Store is the Runner over a real Neo4j: one driver for the process, one
// session per call with the database named explicitly.
type Store struct {
	driver   neo4j.DriverWithContext
	database string
	// readAuth, when set, authenticates the read sessions.
	readAuth *neo4j.AuthToken
	timeout  time.Duration
}

// Open connects to the configured Neo4j, checks the credentials and sets up
// the schema. Its errors say why the graph toolset is unavailable; they
// never hold a password.
func Open(ctx context.Context, cfg configs.Graph) (*Store, error) {
	password, err := secret(ctx, cfg, cfg.PasswordRef())
	if err != nil {
		return nil, err
	}
	driver, err := neo4j.NewDriverWithContext(cfg.URI, neo4j.BasicAuth(cfg.Username, password, ""), func(c *config.Config) {
		c.MaxConnectionPoolSize = cfg.MaxConnections
		c.ConnectionAcquisitionTimeout = cfg.ConnectTimeout
		c.SocketConnectTimeout = cfg.ConnectTimeout
		c.MaxTransactionRetryTime = cfg.MaxRetryTime
		c.UserAgent = "toolwarden"
	})
	if err != nil {
		return nil, fmt.Errorf("graph.uri %s: %w", cfg.URI, err)
	}
	s := &Store{driver: driver, database: cfg.Database, timeout: cfg.QueryTimeout}
	if err := s.open(ctx, cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) open(ctx context.Context, cfg configs.Graph) error {
	cctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := s.driver.VerifyAuthentication(cctx, nil); err != nil {
		return fmt.Errorf("Neo4j at %s as %q: %w", cfg.URI, cfg.Username, describe(err))
	}
	if cfg.ReadUsername != "" {
		password, err := secret(ctx, cfg, cfg.ReadPasswordRef())
		if err != nil {
			return err
		}
		auth := neo4j.BasicAuth(cfg.ReadUsername, password, "")
		if err := s.driver.VerifyAuthentication(cctx, &auth); err != nil {
			return fmt.Errorf("Neo4j at %s as %q (graph.read_username): %w", cfg.URI, cfg.ReadUsername, describe(err))
		}
		s.readAuth = &auth
	}
	if err := setupSchema(ctx, s); err != nil {
		return fmt.Errorf("Neo4j at %s, database %q: schema set-up: %w", cfg.URI, cfg.Database, describe(err))
	}
	return nil
}

// secret reads a password from where the config says: an environment
// variable (or the .env file), a file, or Vault.
func secret(ctx context.Context, cfg configs.Graph, ref configs.SecretRef) (string, error) {
	v, err := cfg.Secret(ctx, ref)
	if err == nil && v == "" {
		err = fmt.Errorf("%s is not set or empty; put the password there", ref)
	}
	return v, err
}

// Close closes the driver and its connections.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.driver.Close(ctx)
}

// Read implements Runner.
func (s *Store) Read(ctx context.Context, work Work) (any, error) {
	return s.execute(ctx, neo4j.AccessModeRead, work)
}

// Write implements Runner.
func (s *Store) Write(ctx context.Context, work Work) (any, error) {
	return s.execute(ctx, neo4j.AccessModeWrite, work)
}

// execute runs work in a transaction of mode, in a span when tracing is on.
func (s *Store) execute(ctx context.Context, mode neo4j.AccessMode, work Work) (any, error) {
	if !tracing.Enabled() {
		return s.run(ctx, mode, work)
	}
	name := map[neo4j.AccessMode]string{neo4j.AccessModeRead: "neo4j read", neo4j.AccessModeWrite: "neo4j write"}[mode]
	ctx, span := tracing.Start(ctx, name, attribute.String("db.system.name", "neo4j"), attribute.String("db.namespace", s.database))
	v, err := s.run(ctx, mode, work)
	tracing.End(span, "", string(toolerr.CodeOf(err)))
	return v, err
}

func (s *Store) run(ctx context.Context, mode neo4j.AccessMode, work Work) (any, error) {
	sc := neo4j.SessionConfig{DatabaseName: s.database, AccessMode: mode}
	if mode == neo4j.AccessModeRead {
		sc.Auth = s.readAuth
	}
	session := s.driver.NewSession(ctx, sc)
	// Closing returns the connection to the pool; it must happen even when
	// the call's context is already cancelled.
	defer session.Close(context.WithoutCancel(ctx))
	body := func(tx neo4j.ManagedTransaction) (any, error) { return work(ctx, managedTx{tx}) }
	var (
		v   any
		err error
	)
	if mode == neo4j.AccessModeRead {
		v, err = session.ExecuteRead(ctx, body, neo4j.WithTxTimeout(s.timeout))
	} else {
		v, err = session.ExecuteWrite(ctx, body, neo4j.WithTxTimeout(s.timeout))
	}
	if err != nil {
		return nil, mapError(ctx, err)
	}
	return v, nil
}

// managedTx adapts the driver's transaction to Tx.
type managedTx struct{ tx neo4j.ManagedTransaction }

func (m managedTx) Query(ctx context.Context, cypher string, params map[string]any) ([]Record, error) {
	res, err := m.tx.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = r.AsMap()
	}
	return out, nil
}

// describe shortens driver errors for the operator: the Neo4j code and
// message, without the driver's wrapping.
func describe(err error) error {
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		return fmt.Errorf("%s: %s", ne.Code, ne.Msg)
	}
	return err
}
