package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/approvals/socket"
)

// newApprovalsCmd is the terminal approver: it talks to running servers
// (approval.channel terminal) over their control sockets.
func newApprovalsCmd() *cobra.Command {
	var server string
	cmd := &cobra.Command{Use: "approvals", Short: "List, approve and deny the calls waiting for approval on running servers (approval.channel terminal)"}
	cmd.PersistentFlags().StringVar(&server, "server", "", "the server to talk to: its process ID or socket path (default: every running server)")
	sockets := func() ([]string, error) {
		dir, err := socket.Dir()
		if err != nil {
			return nil, err
		}
		return socket.Pick(dir, server)
	}
	var asJSON bool
	list := &cobra.Command{Use: "list", Short: "List the calls waiting for approval", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			socks, err := sockets()
			if err != nil {
				return err
			}
			ps, err := socket.ListAll(socks)
			if perr := socket.PrintList(cmd.OutOrStdout(), ps, asJSON, time.Now()); perr != nil {
				return perr
			}
			return err
		}}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON, with each call's whole action")
	var reason string
	decide := func(approve bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			socks, err := sockets()
			if err != nil {
				return err
			}
			p, err := socket.Decide(socks, args[0], approve, reason)
			if err != nil {
				return err
			}
			verb := map[bool]string{true: "approved", false: "denied"}[approve]
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s on server %s\n", verb, p.ID, p.Tool, p.Server)
			return nil
		}
	}
	approve := &cobra.Command{Use: "approve ID", Short: "Approve the waiting call ID once", Args: cobra.ExactArgs(1), RunE: decide(true)}
	deny := &cobra.Command{Use: "deny ID", Short: "Deny the waiting call ID", Args: cobra.ExactArgs(1), RunE: decide(false)}
	deny.Flags().StringVar(&reason, "reason", "", "why, told to the model")
	watch := &cobra.Command{Use: "watch", Short: "Ask y/n for each call as it starts waiting", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			socks, err := sockets()
			if err != nil {
				return err
			}
			return socket.Watch(cmd.Context(), socks, os.Stdin, cmd.OutOrStdout())
		}}
	cmd.AddCommand(list, approve, deny, watch)
	return cmd
}
