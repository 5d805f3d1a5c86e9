package configs

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Cluster is the state several replicas behind a load balancer share:
// rate limits, window counters, budgets and approval state, in one Redis
// or Valkey server. Without RedisURL every replica keeps its own in
// memory, as one process does.
type Cluster struct {
	// SecretSources is where the section's secrets come from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	// RedisURL is redis://host:port/db or rediss:// (TLS). It carries no
	// password: that is read from the variable RedisPasswordEnv names.
	RedisURL         string `mapstructure:"redis_url" yaml:"redis_url"`
	RedisPasswordEnv string `mapstructure:"redis_password_env" yaml:"redis_password_env"`
	// SecretEnv names the variable holding the key that signs approval
	// state (the 2026-07-28 retry's requestState); every replica must
	// hold the same one, so that any replica can check another's state.
	SecretEnv string `mapstructure:"secret_env" yaml:"secret_env"`
	// The *_file and *_vault keys are the other places the secrets may
	// come from (secrets.go).
	RedisPasswordFile  string `mapstructure:"redis_password_file" yaml:"redis_password_file"`
	RedisPasswordVault string `mapstructure:"redis_password_vault" yaml:"redis_password_vault"`
	SecretFile         string `mapstructure:"secret_file" yaml:"secret_file"`
	SecretVault        string `mapstructure:"secret_vault" yaml:"secret_vault"`
	// ReplicaID names this replica in logs; empty means host name and pid.
	ReplicaID string `mapstructure:"replica_id" yaml:"replica_id"`
}

// MinClusterSecretBytes is the shortest approval-state key accepted.
const MinClusterSecretBytes = 32

var replicaIDPattern = lazyregexp.New(`^[A-Za-z0-9._-]{1,64}$`)

// Shared reports whether the replicas share their state in Redis.
func (c Cluster) Shared() bool { return c.RedisURL != "" }

func (c Cluster) validate(add func(string, string, ...any)) {
	if c.ReplicaID != "" && !replicaIDPattern.MatchString(c.ReplicaID) {
		add("cluster.replica_id", "%q is not a replica name (1-64 letters, digits, '.', '_' and '-')", c.ReplicaID)
	}
	for _, kv := range [][2]string{{"cluster.redis_password_env", c.RedisPasswordEnv}, {"cluster.secret_env", c.SecretEnv}} {
		if kv[1] != "" && !envVarName.MatchString(kv[1]) {
			// The value is not echoed: it may be the secret itself.
			add(kv[0], "is not an environment variable name (letters, digits and _); name the variable that holds the secret, never the secret itself")
		}
	}
	if !c.Shared() {
		return
	}
	if err := checkRedisURL(c.RedisURL); err != nil {
		add("cluster.redis_url", "%v", err)
	}
	if !c.secretRef().Set() {
		add("cluster.secret_env", "must name the environment variable holding the approval-state key when cluster.redis_url is set")
	}
}

// checkRedisURL accepts redis:// and rediss:// with a host and at most a
// database number; a password in the URL is refused, as it would sit in
// the config file and in `config check`'s output.
func checkRedisURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL")
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return fmt.Errorf("%q: the scheme must be redis:// or rediss:// (TLS)", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("names no host (redis://host:port/0)")
	}
	if _, has := u.User.Password(); has {
		return fmt.Errorf("holds a password; put it in the variable cluster.redis_password_env names instead")
	}
	return nil
}

// ClusterSecret reads the approval-state key from the variable SecretEnv
// names; the error names the key to fix.
func (c Cluster) ClusterSecret() ([]byte, error) {
	ref := c.secretRef()
	if !ref.Set() {
		return nil, fmt.Errorf("cluster.secret_env: must name the variable holding the approval-state key when cluster.redis_url is set")
	}
	v, err := c.Secret(context.Background(), ref)
	switch {
	case err != nil:
		return nil, err
	case v == "" && ref.Env != "":
		return nil, fmt.Errorf("cluster.secret_env: the variable %s is empty or unset; set it to the same random key (at least %d bytes) on every replica", c.SecretEnv, MinClusterSecretBytes)
	case v == "":
		return nil, fmt.Errorf("%s is empty; set it to the same random key (at least %d bytes) on every replica", ref, MinClusterSecretBytes)
	case len(v) < MinClusterSecretBytes && ref.File == "" && ref.Vault == "":
		return nil, fmt.Errorf("cluster.secret_env: the key in %s has %d bytes; at least %d are needed", c.SecretEnv, len(v), MinClusterSecretBytes)
	case len(v) < MinClusterSecretBytes:
		return nil, fmt.Errorf("the key in %s has %d bytes; at least %d are needed", ref, len(v), MinClusterSecretBytes)
	}
	return []byte(v), nil
}

// RedisPassword reads the password from where cluster.redis_password_env,
// _file or _vault says ("" when none is named).
func (c Cluster) RedisPassword() (string, error) {
	return c.Secret(context.Background(), c.redisPasswordRef())
}

// Replica is ReplicaID, or host name and pid when it is not set.
func (c Cluster) Replica() string {
	if c.ReplicaID != "" {
		return c.ReplicaID
	}
	host, err := os.Hostname()
	if err != nil {
		host = "replica"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
