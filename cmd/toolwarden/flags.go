package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools/declared"
)

// configFlags are the flags of every command that builds the effective
// config (serve, tools, config check, policy explain, call, gemini): the
// same flags everywhere, so a config proved with one command is the one
// another runs.
type configFlags struct {
	file        string
	allow, deny []string
	// serveFlags registers serve's own flags too (--http,
	// --approval-page): serve and config check take them, so that config
	// check proves the config serve runs.
	serveFlags bool
	// logsWarnings is serve's: it logs the config's warnings at start;
	// other commands print them to stderr.
	logsWarnings bool
}

// flagKeys maps flag names to the config keys they override.
var flagKeys = map[string]string{"workspace": "workspace", "http": "http.addr"}

func (f *configFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.file, "config", "", "config file (default ./toolwarden.yaml, then $XDG_CONFIG_HOME/toolwarden/config.yaml)")
	// configs.Load reads --grant and --revoke from the flag set.
	cmd.Flags().StringArray("grant", nil, "capability resource:verb:scope to grant, added to capabilities.grant (repeatable)")
	cmd.Flags().StringArray("revoke", nil, "capability pattern to deny, added to capabilities.deny (repeatable; deny wins)")
	cmd.Flags().String("workspace", "", "directory the tools are confined to (default: current directory)")
	// configs.Load reads --approval from the flag set.
	cmd.Flags().StringArray("approval", nil,
		"TOOL_GLOB=MODE, MODE elicit (ask the human), deny or allow (run without asking); added to approval.modes (repeatable; the most restrictive matching mode wins)")
	cmd.Flags().StringArrayVar(&f.allow, "allow", nil, "tool-name glob to allow, added to policy.allow (repeatable)")
	cmd.Flags().StringArrayVar(&f.deny, "deny", nil, "tool-name glob to deny, added to policy.deny (repeatable; deny wins)")
	if f.serveFlags {
		cmd.Flags().String("http", "", "listen address for HTTP, e.g. 127.0.0.1:8080 (default: stdio)")
		cmd.Flags().Bool("approval-page", false, "add the local approval page to approval.channel (after the configured channels); its URL is printed to stderr once")
	}
}

// load reads the configuration for cmd.
func (f *configFlags) load(cmd *cobra.Command) (*configs.Loaded, error) {
	keys := map[string]string{}
	for name, key := range flagKeys {
		if cmd.Flags().Lookup(name) != nil {
			keys[name] = key
		}
	}
	page, _ := cmd.Flags().GetBool("approval-page")
	l, err := configs.Load(configs.Options{File: f.file, Flags: cmd.Flags(), FlagKeys: keys, Allow: f.allow, Deny: f.deny,
		ApprovalPage: page, CheckTool: declared.Check})
	if err == nil && !f.logsWarnings {
		for _, w := range l.Warnings {
			fmt.Fprintln(os.Stderr, "toolwarden: warning:", w)
		}
	}
	return l, err
}
