package mcpserver

import (
	"context"
	"log/slog"

	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/clusterstate"
)

// cluster is what a replica shares with the others (cluster.redis_url):
// nil when it runs alone.
type cluster struct {
	client  *clusterstate.Client
	secret  []byte
	replica string
}

// openCluster connects to the shared state when cluster.redis_url is set.
// A missing or short cluster.secret_env key stops the start; Redis being
// down does not (it is logged): calls fail closed until it is back.
func openCluster(ctx context.Context, cfg configs.Cluster, log *slog.Logger) (*cluster, error) {
	if !cfg.Shared() {
		return nil, nil
	}
	secret, err := cfg.ClusterSecret()
	if err != nil {
		return nil, err
	}
	password, err := cfg.RedisPassword()
	if err != nil {
		return nil, err
	}
	clusterstate.LogTo(log)
	c, err := clusterstate.Open(clusterstate.Options{URL: cfg.RedisURL, Password: password})
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx); err != nil {
		log.Warn("cluster: the shared state (cluster.redis_url) cannot be reached; calls are refused with backend.unavailable until it is",
			"replica", cfg.Replica(), "err", err)
	}
	return &cluster{client: c, secret: secret, replica: cfg.Replica()}, nil
}

// join makes s a replica of the fleet: approval answers signed with the
// shared key, used once fleet-wide, and (once OpenApprovals makes the
// hub) calls waiting on the page or terminal shown and decided on any
// replica. Call it before serving calls.
func (s *Server) join(c *cluster) {
	s.approval.states = sharedStateSigner(c.secret, c.client)
	s.approval.joinFleet = func(h *approvals.Hub) { clusterstate.ShareApprovals(c.client, c.replica, h, s.log) }
	s.tasks.share(clusterstate.NewTasks(c.client), c.replica)
}

// usage is the shared store of the identities' usage, or nil (memory).
func (c *cluster) usage(cfg configs.Config) guard.UsageStore {
	if c == nil {
		return nil
	}
	return clusterstate.NewUsage(c.client, GuardLimits(cfg.Limits))
}

// ClusterSummary says, for `config check`, where limits and approval
// state are kept.
func ClusterSummary(cfg configs.Cluster) string {
	if !cfg.Shared() {
		return "in the memory of each process (cluster.redis_url is empty): limits count per replica"
	}
	return "shared by every replica in Redis/Valkey at " + cfg.RedisURL + "; this replica is " + cfg.Replica()
}
