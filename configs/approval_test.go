package configs

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestApprovalDefault(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, l.Config.Approval.Timeout)
	require.Empty(t, l.Config.Approval.Modes, "requires_approval alone decides by default")
	require.Equal(t, ApprovalMaxPending{PerIdentity: 8, Total: 64}, l.Config.Approval.MaxPending)
}

func TestApprovalModesFileAndFlags(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", `approval:
  timeout: 30s
  modes:
    "write_*": elicit
    run_command: deny
    create_directory: allow
`)
	l, err := Load(Options{File: "file.yaml", Approval: []string{
		"write_*=allow",         // cannot loosen the file's elicit
		"run_command=allow",     // nor its deny
		"create_directory=deny", // but can tighten its allow
		"delete_file=allow",
	}})
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, l.Config.Approval.Timeout)
	require.Equal(t, map[string]string{
		"write_*": "elicit", "run_command": "deny", "create_directory": "deny", "delete_file": "allow",
	}, l.Config.Approval.Modes)
	require.Equal(t, []string{
		`approval.modes sets "delete_file" to allow: matching tools run without asking the human (from flag --approval)`,
	}, l.Widenings)
}

func TestApprovalAllowInFileIsAWidening(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "approval:\n  modes:\n    \"*_file\": allow\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{
		`approval.modes sets "*_file" to allow: matching tools run without asking the human (from file.yaml)`,
	}, l.Widenings)
}

func TestApprovalInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		flags      []string
		want       string
	}{
		{name: "unknown mode", file: "approval:\n  modes:\n    write_file: maybe\n", want: `file.yaml:2: approval.modes: "write_file": "maybe" is not an approval mode`},
		{name: "bad glob", file: "approval:\n  modes:\n    \"[\": deny\n", want: `approval.modes: "[" is not a valid tool-name glob`},
		{name: "zero timeout", file: "approval:\n  timeout: 0s\n", want: "approval.timeout: must be between 0 and 1h0m0s"},
		{name: "flag without mode", flags: []string{"write_file"}, want: `--approval "write_file": want TOOL_GLOB=MODE`},
		{name: "flag bad mode", flags: []string{"write_file=yes"}, want: `--approval "write_file=yes"`},
		{name: "flag bad glob", flags: []string{"[=deny"}, want: `--approval "[=deny"`},
		{name: "flag empty glob", flags: []string{"=deny"}, want: `--approval "=deny"`},
		{name: "unknown channel", file: "approval:\n  channel: [elicit, pager]\n", want: `approval.channel: "pager" is not an approval channel (elicit, page, terminal, webhook)`},
		{name: "webhook without url", file: "approval:\n  channel: [webhook]\n  webhook: {secret_env: TW_SECRET}\n", want: `approval.webhook.url: "" is not an http(s) URL`},
		{name: "webhook secret inline", file: "approval:\n  channel: [webhook]\n  webhook: {url: \"https://hooks.example/tw\", secret_env: \"s3cr3t value!\"}\n", want: `approval.webhook.secret_env: "s3cr3t value!" is not an environment variable name`},
		{name: "webhook bad listen", file: "approval:\n  channel: [webhook]\n  webhook: {url: \"https://hooks.example/tw\", secret_env: TW_SECRET, listen: nope}\n", want: `approval.webhook.listen: "nope" is not a host:port`},
		{name: "no pending per identity", file: "approval:\n  max_pending: {per_identity: 0}\n", want: `approval.max_pending.per_identity: must be between 1 and approval.max_pending.total (64), got 0`},
		{name: "per identity over total", file: "approval:\n  max_pending: {per_identity: 9, total: 4}\n", want: `approval.max_pending.per_identity: must be between 1 and approval.max_pending.total (4), got 9`},
		{name: "unbounded total", file: "approval:\n  max_pending: {total: 0}\n", want: `approval.max_pending.total: must be between 1 and 4096, got 0`},
		{name: "total too large", file: "approval:\n  max_pending: {total: 100000}\n", want: `approval.max_pending.total: must be between 1 and 4096, got 100000`},
		{name: "no channel", file: "approval:\n  channel: []\n", want: `approval.channel: must list at least one channel`},
		{name: "channel twice", file: "approval:\n  channel: [page, page]\n", want: `approval.channel: "page" is listed twice`},
		{name: "page not loopback", file: "approval:\n  channel: [page]\n  page: {addr: \"0.0.0.0:8080\"}\n", want: `approval.page.addr: "0.0.0.0:8080" is not a loopback host:port`},
		{name: "page by name", file: "approval:\n  channel: [page]\n  page: {addr: \"localhost:8080\"}\n", want: `approval.page.addr: "localhost:8080" is not a loopback`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			opts := Options{Approval: tc.flags}
			if tc.file != "" {
				writeFile(t, "file.yaml", tc.file)
				opts.File = "file.yaml"
			}
			_, err := Load(opts)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestApprovalChannels(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"elicit"}, l.Config.Approval.Channel, "by default nothing listens")
	writeFile(t, "file.yaml", "approval:\n  channel: [elicit, terminal]\n")
	l, err = Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{"elicit", "terminal"}, l.Config.Approval.Channel)
	require.Equal(t, "127.0.0.1:0", l.Config.Approval.Page.Addr)
}

func TestApprovalMaxPendingFromEnv(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_APPROVAL_MAX_PENDING_PER_IDENTITY", "2")
	t.Setenv("TOOLWARDEN_APPROVAL_MAX_PENDING_TOTAL", "5")
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, ApprovalMaxPending{PerIdentity: 2, Total: 5}, l.Config.Approval.MaxPending)
}

func TestApprovalFlagFromFlagSet(t *testing.T) {
	isolate(t)
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.StringArray("approval", nil, "")
	require.NoError(t, fs.Parse([]string{"--approval", "run_*=deny", "--approval", "write_file=allow"}))
	l, err := Load(Options{Flags: fs})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"run_*": "deny", "write_file": "allow"}, l.Config.Approval.Modes)
	require.Contains(t, l.Widenings, `approval.modes sets "write_file" to allow: matching tools run without asking the human (from flag --approval)`)

	require.NoError(t, fs.Parse([]string{"--approval", "write_file"}))
	_, err = Load(Options{Flags: fs})
	require.ErrorContains(t, err, `--approval "write_file": want TOOL_GLOB=MODE`)
}
