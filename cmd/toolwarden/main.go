// Command toolwarden is a security-first MCP server: it exposes a workspace
// and backend services to LLMs only through allowlisted, guarded tools.
//
// This package only turns flags into a configuration and calls the
// packages that do the work.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	buildversion "github.com/toolwarden/toolwarden/internal/version"
)

// build is this binary's version, commit and date: stamped by the release
// build, else what the Go toolchain recorded (see internal/version).
var build = buildversion.Get()

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "toolwarden:", err)
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "toolwarden",
		Short:         "A security-first MCP server: guarded, allowlisted tools for LLMs",
		Version:       build.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newCallCmd(), newPolicyCmd())
	root.AddCommand(newServeCmd(), newToolsCmd(), newConfigCmd(), newAuditCmd())
	root.AddCommand(newGeminiCmd(), newVersionCmd(), newApprovalsCmd(), newPinCmd())
	return root
}
