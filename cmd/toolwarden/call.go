package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// Exit statuses besides 0 (success, allowed) and 1 (could not run: bad
// flags, bad config): a refused or failed call, and one that needs approval.
const (
	exitDenied        = 2
	exitNeedsApproval = 3
)

// exitError carries an exit status out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode is the status main exits with for err.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

func newCallCmd() *cobra.Command {
	f := &configFlags{}
	var trusted bool
	cmd := &cobra.Command{
		Use:   "call TOOL [ARGS_JSON]",
		Short: "Call one tool through the guard, as a client would, and print the result as JSON",
		Long: `Call one tool through the same server, guard, limits and audit log as serve,
and print the MCP result as JSON. The exit status is non-zero when the result is an
error (isError): status 2. --trusted makes it an operator call: tools marked
requires_trust run only this way, and the audit line is marked trusted.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, raw, err := f.loadCall(cmd, args)
			if err != nil {
				return err
			}
			isError, err := mcpserver.CallOnce(cmd.Context(), l, args[0], raw, trusted, os.Stdout)
			if err != nil {
				return err
			}
			if isError {
				return &exitError{exitDenied, "the call returned an error result (isError)"}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&trusted, "trusted", false, "make it a trusted operator call (runs requires_trust tools; audited as trusted)")
	return cmd
}

// argsJSON returns the ARGS_JSON argument, "{}" when absent; it must be a
// JSON object.
func argsJSON(args []string) (json.RawMessage, error) {
	if len(args) < 2 {
		return json.RawMessage(`{}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args[1]), &m); err != nil || m == nil {
		return nil, fmt.Errorf("ARGS_JSON must be a JSON object, e.g. '{\"path\":\"README.md\"}'")
	}
	return json.RawMessage(args[1]), nil
}

// loadCall reads a call's TOOL [ARGS_JSON] arguments and the effective
// config, as call and policy explain both begin: a bad ARGS_JSON is
// reported before the config is read.
func (f *configFlags) loadCall(cmd *cobra.Command, args []string) (*configs.Loaded, json.RawMessage, error) {
	raw, err := argsJSON(args)
	if err != nil {
		return nil, nil, err
	}
	l, err := f.load(cmd)
	if err != nil {
		return nil, nil, err
	}
	return l, raw, nil
}
