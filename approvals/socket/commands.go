package socket

import (
	"context"
	"fmt"
	"io"
	"time"
)

// The entry points of the terminal approver's commands (toolwarden
// approvals list, approve, deny, watch). server names the running server
// to talk to, by process ID or socket path; empty means every one.

// RunList writes the calls waiting for approval on the servers, with
// their whole actions as JSON when asJSON is set. What it could list is
// written even when a server failed to answer; that failure is returned.
func RunList(w io.Writer, server string, asJSON bool) error {
	socks, err := pick(server)
	if err != nil {
		return err
	}
	ps, err := ListAll(socks)
	if perr := PrintList(w, ps, asJSON, time.Now()); perr != nil {
		return perr
	}
	return err
}

// RunDecide approves (once) or denies the waiting call id, with reason
// told to the model, and writes what it decided.
func RunDecide(w io.Writer, server, id string, approve bool, reason string) error {
	socks, err := pick(server)
	if err != nil {
		return err
	}
	p, err := Decide(socks, id, approve, reason)
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "approved", false: "denied"}[approve]
	fmt.Fprintf(w, "%s %s: %s on server %s\n", verb, oneLine(p.ID), oneLine(p.Tool), oneLine(p.Server))
	return nil
}

// RunWatch asks y/n on out, read from in, for each call as it starts
// waiting, until ctx ends.
func RunWatch(ctx context.Context, server string, in io.Reader, out io.Writer) error {
	socks, err := pick(server)
	if err != nil {
		return err
	}
	return Watch(ctx, socks, in, out)
}

// pick returns the sockets of the servers server names (Pick) in this
// user's socket directory.
func pick(server string) ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return Pick(dir, server)
}
