package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// configCommands are the subcommands that build the effective config.
var configCommands = []string{"serve", "tools", "config check", "policy explain", "call", "gemini"}

// TestConfigFlagsAgree: every command that builds the effective config
// takes the same config flags, so a config proved with `config check` or
// `policy explain` is the one `serve` runs.
func TestConfigFlagsAgree(t *testing.T) {
	root := newRootCmd()
	want := flagNames(&cobra.Command{}, func(c *cobra.Command) { (&configFlags{}).register(c) })
	require.Contains(t, want, "allow")
	for _, path := range configCommands {
		t.Run(path, func(t *testing.T) {
			cmd := find(t, root, path)
			var got []string
			cmd.Flags().VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
			for _, name := range want {
				require.Contains(t, got, name, "%s lacks --%s", path, name)
			}
		})
	}
}

func flagNames(c *cobra.Command, register func(*cobra.Command)) []string {
	register(c)
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	return names
}

func find(t *testing.T, root *cobra.Command, path string) *cobra.Command {
	t.Helper()
	cmd, rest, err := root.Find(strings.Fields(path))
	require.NoError(t, err)
	require.Empty(t, rest)
	return cmd
}

// TestConfigCheckTakesEveryServeFlag: every flag of serve changes the
// config it runs, so config check takes each one (--http and
// --approval-page were refused).
func TestConfigCheckTakesEveryServeFlag(t *testing.T) {
	root := newRootCmd()
	var check []string
	find(t, root, "config check").Flags().VisitAll(func(f *pflag.Flag) { check = append(check, f.Name) })
	find(t, root, "serve").Flags().VisitAll(func(f *pflag.Flag) {
		require.Contains(t, check, f.Name, "config check lacks serve's --%s", f.Name)
	})
	require.Contains(t, check, "approval-page")
}
