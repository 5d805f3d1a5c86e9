package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/mcpserver"
	"go.yaml.in/yaml/v3"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect configuration"}
	f := &configFlags{}
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate a config and print the effective policy, or fail naming file, key and reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			return printEffective(cmd, l)
		},
	}
	f.register(check)
	cmd.AddCommand(check)
	return cmd
}

// effective is what `config check` prints.
type effective struct {
	Source     string   `yaml:"source"`
	Widenings  []string `yaml:"widenings,omitempty"`
	Advertised []string `yaml:"advertised_tools"`
	Hidden     []string `yaml:"hidden_tools"`
	// Approval says, for each advertised tool that asks the human or was
	// let off asking, its approval mode and the rule that set it.
	Approval map[string]string `yaml:"approval,omitempty"`
	// ApprovalChannels is approval.channel in words, in the order tried.
	ApprovalChannels []string `yaml:"approval_channels"`
	// Unavailable lists toolsets whose backend could not be opened.
	Unavailable []mcpserver.Unavailable `yaml:"unavailable_toolsets,omitempty"`
	// Sandbox says, for the backend the exec tools run in and the mode the
	// server runs in (root or rootless), how each limit is really enforced.
	Sandbox   *mcpserver.SandboxReport `yaml:"sandbox,omitempty"`
	AuditPath string                   `yaml:"audit_path"`
	// Audit says, in words, the replica every line names, where lines are
	// shipped and where the chain head is anchored.
	Audit auditSummary `yaml:"audit"`
	// SecretFiles are the path globs no tool may read or write
	// (capabilities.secret_files, unless allow_secret_files lifts them).
	SecretFiles []string `yaml:"secret_files_denied"`
	// LimitsCountedOver says what each limit in force is counted over:
	// an identity's window, a token bucket, or one call.
	LimitsCountedOver map[string]string `yaml:"limits_counted_over"`
	// SharedState says where limits and approval state are kept: this
	// process, or Redis shared by the replicas (cluster.redis_url).
	SharedState string         `yaml:"shared_state"`
	Config      configs.Config `yaml:"config"`

	// OAuth says which access tokens are accepted, when http.oauth is set.
	OAuth *oauthSummary `yaml:"oauth,omitempty"`

	// ToolsSHA256 is the digest of the advertised tool surface, as in the
	// audit log's start line.
	ToolsSHA256 string `yaml:"tools_sha256"`
}

func printEffective(cmd *cobra.Command, l *configs.Loaded) error {
	b, err := mcpserver.Build(cmd.Context(), oneShot(l.Config), audit.Discard{}, version, newLogger("error"))
	if err != nil {
		return err
	}
	defer b.Close()
	out := effective{Source: l.File, Widenings: l.Widenings, AuditPath: mcpserver.AuditPath(l.Config), Config: l.Config,
		SecretFiles: l.Config.Capabilities.SecretGlobs(), Unavailable: b.Unavailable, Sandbox: b.Sandbox, Advertised: []string{}, Hidden: []string{},
		LimitsCountedOver: mcpserver.LimitScopes(l.Config.Limits, l.Config.Identities), ApprovalChannels: b.ApprovalChannels(),
		SharedState: mcpserver.ClusterSummary(l.Config.Cluster)}
	if out.Source == "" {
		out.Source = "embedded defaults"
	}
	out.Audit = summarizeAudit(l.Config)
	if out.OAuth, err = summarizeOAuth(l.Config.HTTP); err != nil {
		return err
	}
	if out.ToolsSHA256, err = b.SurfaceDigest(cmd.Context()); err != nil {
		return err
	}
	for _, t := range b.Tools {
		if b.Allowed(t.Tool.Name) {
			out.Advertised = append(out.Advertised, t.Tool.Name)
			if mode, rule := b.ApprovalOf(t.Tool.Name); mode != guard.ApprovalAllow || t.Meta.RequiresApproval {
				if out.Approval == nil {
					out.Approval = map[string]string{}
				}
				out.Approval[t.Tool.Name] = string(mode) + " (" + rule + ")"
			}
		} else {
			out.Hidden = append(out.Hidden, t.Tool.Name)
		}
	}
	enc := yaml.NewEncoder(os.Stdout)
	enc.SetIndent(2)
	return enc.Encode(out)
}

// oauthSummary is what `config check` says of http.oauth.
type oauthSummary struct {
	Issuer   string   `yaml:"issuer"`
	Audience string   `yaml:"audience"`
	Scopes   []string `yaml:"required_scopes"`
	Metadata string   `yaml:"resource_metadata"`
	// Introspection is where opaque tokens are asked about, if anywhere.
	Introspection string `yaml:"introspection,omitempty"`
}

func summarizeOAuth(h configs.HTTP) (*oauthSummary, error) {
	v, err := mcpserver.OAuthVerifier(h)
	if err != nil || v == nil {
		return nil, err
	}
	meta := "<the request's scheme and Host>" + oauth.MetadataPath + mcpserver.PathStreamable
	if h.PublicURL != "" {
		meta = strings.TrimSuffix(h.PublicURL, "/") + oauth.MetadataPath + mcpserver.PathStreamable
	}
	out := &oauthSummary{Issuer: v.Issuer(), Audience: v.Audience(), Scopes: v.Scopes(), Metadata: meta}
	if in := h.OAuth.Introspection; in.Enabled {
		out.Introspection = in.Endpoint
		if in.Endpoint == "" {
			out.Introspection = "the issuer metadata's introspection_endpoint"
		}
	}
	return out, nil
}

// auditSummary is what `config check` says of the audit log's replica,
// shipping and anchoring.
type auditSummary struct {
	Replica string `yaml:"replica"`
	Ship    string `yaml:"shipping"`
	Anchor  string `yaml:"anchors"`
}

func summarizeAudit(c configs.Config) auditSummary {
	a := c.Audit
	out := auditSummary{Replica: a.Replica(), Ship: "off (audit.ship.syslog is empty)", Anchor: "off (audit.anchor.bucket is empty)"}
	if a.Ship.Syslog != "" {
		out.Ship = fmt.Sprintf("every line to syslog %s as RFC 5424, up to %d queued, beyond that dropped and counted", a.Ship.Syslog, a.Ship.Queue)
	}
	if a.Anchor.Bucket != "" {
		out.Anchor = fmt.Sprintf("chain head every %s to s3://%s/%s%s/ on %s", a.Anchor.Every, a.Anchor.Bucket, a.Anchor.Prefix, a.Replica(), c.Artifacts.Endpoint)
	}
	return out
}
