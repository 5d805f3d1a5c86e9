package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
	"go.yaml.in/yaml/v3"
)

// Effective is what config check prints (as YAML).
type Effective struct {
	Source    string   `yaml:"source"`
	Widenings []string `yaml:"widenings,omitempty"`
	// Warnings are likely mistakes that do not stop the server, such as
	// a TOOLWARDEN_* variable that sets no key.
	Warnings   []string `yaml:"warnings,omitempty"`
	Advertised []string `yaml:"advertised_tools"`
	Hidden     []string `yaml:"hidden_tools"`
	// Approval says, for each advertised tool that asks the human or was
	// let off asking, its approval mode and the rule that set it.
	Approval map[string]string `yaml:"approval,omitempty"`
	// ApprovalChannels is approval.channel in words, in the order tried.
	ApprovalChannels []string `yaml:"approval_channels"`
	// Unavailable lists toolsets whose backend could not be opened.
	Unavailable []Unavailable `yaml:"unavailable_toolsets,omitempty"`
	// Sandbox says, for the backend the exec tools run in and the mode the
	// server runs in (root or rootless), how each limit is really enforced.
	Sandbox   *SandboxReport `yaml:"sandbox,omitempty"`
	AuditPath string         `yaml:"audit_path"`
	// Audit says, in words, the replica every line names, where lines are
	// shipped and where the chain head is anchored.
	Audit AuditSummary `yaml:"audit"`
	// SecretFiles are the path globs no tool may read or write
	// (capabilities.secret_files, unless allow_secret_files lifts them).
	SecretFiles []string `yaml:"secret_files_denied"`
	// LimitsCountedOver says what each limit in force is counted over:
	// an identity's window, a token bucket, or one call.
	LimitsCountedOver map[string]string `yaml:"limits_counted_over"`
	// Network says, for each tool that has network (run_script and
	// run_command: exec.network; a declared cli tool: its own block), the
	// hosts its sandbox may reach through the egress proxy and the
	// brokered ones by header name, whether or not the tool is offered.
	// A tool not listed has none.
	Network map[string]ToolNetwork `yaml:"network,omitempty"`
	// SharedState says where limits and approval state are kept: this
	// process, or Redis shared by the replicas (cluster.redis_url).
	SharedState string         `yaml:"shared_state"`
	Config      configs.Config `yaml:"config"`

	// OAuth says which access tokens are accepted, when http.oauth is set.
	OAuth *OAuthSummary `yaml:"oauth,omitempty"`

	// ToolsSHA256 is the digest of the advertised tool surface, as in the
	// audit log's start line.
	ToolsSHA256 string `yaml:"tools_sha256"`
}

// CheckConfig builds the server of l's config, without serving or
// auditing, and writes to w, as YAML, the Effective config: the tools
// advertised and hidden, approval, sandbox, audit, limits and OAuth in
// words, and the digest of the tool surface.
func CheckConfig(ctx context.Context, l *configs.Loaded, w io.Writer) error {
	b, err := Build(withProbe(ctx, probeCached), oneShot(l.Config), audit.Discard{}, buildInfo.Version, NewLogger("error"))
	if err != nil {
		return err
	}
	defer b.Close()
	out := Effective{Source: l.File, Widenings: l.Widenings, Warnings: l.Warnings, AuditPath: AuditPath(l.Config), Config: l.Config,
		SecretFiles: l.Config.Capabilities.SecretGlobs(), Unavailable: b.Unavailable, Sandbox: b.Sandbox, Advertised: []string{}, Hidden: []string{},
		LimitsCountedOver: LimitScopes(l.Config.Limits, l.Config.Identities), ApprovalChannels: b.ApprovalChannels(),
		SharedState: ClusterSummary(l.Config.Cluster)}
	if out.Source == "" {
		out.Source = "embedded defaults"
	}
	out.Audit = summarizeAudit(l.Config)
	if out.OAuth, err = summarizeOAuth(l.Config.HTTP); err != nil {
		return err
	}
	if out.ToolsSHA256, err = b.SurfaceDigest(ctx); err != nil {
		return err
	}
	if nets := toolNetworks(l.Config); len(nets) > 0 {
		out.Network = nets
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
	// The encoder writes each scalar on its own: one write to w, not ~100.
	bw := bufio.NewWriter(w)
	enc := yaml.NewEncoder(bw)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return err
	}
	return bw.Flush()
}

// OAuthSummary is what config check says of http.oauth.
type OAuthSummary struct {
	Issuer   string   `yaml:"issuer"`
	Audience string   `yaml:"audience"`
	Scopes   []string `yaml:"required_scopes"`
	Metadata string   `yaml:"resource_metadata"`
	// Introspection is where opaque tokens are asked about, if anywhere.
	Introspection string `yaml:"introspection,omitempty"`
}

// summarizeOAuth says which access tokens http.oauth accepts; nil when
// it is not set.
func summarizeOAuth(h configs.HTTP) (*OAuthSummary, error) {
	v, err := httpserve.OAuthVerifier(h)
	if err != nil || v == nil {
		return nil, err
	}
	meta := "<the request's scheme and Host>" + oauth.MetadataPath + httpserve.PathStreamable
	if h.PublicURL != "" {
		meta = strings.TrimSuffix(h.PublicURL, "/") + oauth.MetadataPath + httpserve.PathStreamable
	}
	out := &OAuthSummary{Issuer: v.Issuer(), Audience: v.Audience(), Scopes: v.Scopes(), Metadata: meta}
	if in := h.OAuth.Introspection; in.Enabled {
		out.Introspection = in.Endpoint
		if in.Endpoint == "" {
			out.Introspection = "the issuer metadata's introspection_endpoint"
		}
	}
	return out, nil
}

// AuditSummary is what config check says of the audit log's replica,
// shipping and anchoring.
type AuditSummary struct {
	Replica string `yaml:"replica"`
	Ship    string `yaml:"shipping"`
	Anchor  string `yaml:"anchors"`
}

// summarizeAudit says where the audit lines go besides the log.
func summarizeAudit(c configs.Config) AuditSummary {
	a := c.Audit
	out := AuditSummary{Replica: a.Replica(), Ship: "off (audit.ship.syslog and audit.ship.otlp are empty)", Anchor: "off (audit.anchor.bucket is empty)"}
	var ships []string
	if a.Ship.Syslog != "" {
		ships = append(ships, fmt.Sprintf("every line to syslog %s as RFC 5424, up to %d queued, beyond that dropped and counted", a.Ship.Syslog, a.Ship.Queue))
	}
	if a.Ship.OTLP != "" {
		ships = append(ships, fmt.Sprintf("every line to OTLP %s as a log record, spooled on disk up to %d bytes while it is down", a.Ship.OTLP, a.Ship.SpoolMaxBytes))
	}
	if len(ships) > 0 {
		out.Ship = strings.Join(ships, "; ")
	}
	if a.Anchor.Bucket != "" {
		out.Anchor = fmt.Sprintf("chain head every %s to s3://%s/%s%s/ on %s", a.Anchor.Every, a.Anchor.Bucket, a.Anchor.Prefix, a.Replica(), c.Artifacts.Endpoint)
	}
	return out
}
