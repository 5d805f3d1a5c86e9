package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/approvals/socket"
)

// newApprovalsCmd is the terminal approver: it talks to running servers
// (approval.channel terminal) over their control sockets.
func newApprovalsCmd() *cobra.Command {
	var server string
	cmd := &cobra.Command{Use: "approvals", Short: "List, approve and deny the calls waiting for approval on running servers (approval.channel terminal)"}
	cmd.PersistentFlags().StringVar(&server, "server", "", "the server to talk to: its process ID or socket path (default: every running server)")
	var asJSON bool
	list := &cobra.Command{Use: "list", Short: "List the calls waiting for approval", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return socket.RunList(cmd.OutOrStdout(), server, asJSON)
		}}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON, with each call's whole action")
	var reason string
	decide := func(approve bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			return socket.RunDecide(cmd.OutOrStdout(), server, args[0], approve, reason)
		}
	}
	approve := &cobra.Command{Use: "approve ID", Short: "Approve the waiting call ID once", Args: cobra.ExactArgs(1), RunE: decide(true)}
	deny := &cobra.Command{Use: "deny ID", Short: "Deny the waiting call ID", Args: cobra.ExactArgs(1), RunE: decide(false)}
	deny.Flags().StringVar(&reason, "reason", "", "why, told to the model")
	watch := &cobra.Command{Use: "watch", Short: "Ask y/n for each call as it starts waiting", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return socket.RunWatch(cmd.Context(), server, os.Stdin, cmd.OutOrStdout())
		}}
	cmd.AddCommand(list, approve, deny, watch)
	return cmd
}
