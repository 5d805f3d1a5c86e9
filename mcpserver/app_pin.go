package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools/upstream"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// ErrPinsDiffer is CheckPins' error when the upstreams' listings differ
// from the pins file: `toolwarden pin --check` exits 1 with it.
var ErrPinsDiffer = errors.New("the upstreams' tool or prompt definitions differ from the pins file")

// Pin connects to every upstream of l, lists its tools and prompts and
// writes their pins to out (default: toolwarden.pins.json beside the config file).
// Nothing is written unless every upstream answered: a pins file without
// one of them would block all its tools.
func Pin(ctx context.Context, l *configs.Loaded, out string, w io.Writer) error {
	if len(l.Config.Upstreams) == 0 {
		// An empty pins file would switch upstream_pins to block and
		// refuse every upstream added later until it is pinned again.
		return errors.New("no upstreams in the config (upstreams: or upstreams.d/): nothing to pin, no pins file written")
	}
	f, err := listAll(ctx, l.Config)
	if err != nil {
		return err
	}
	if out == "" {
		out = configs.PinsFile(l.File)
	}
	if err := pin.Write(out, f); err != nil {
		return fmt.Errorf("pins not written: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Upstreams)) {
		u := f.Upstreams[name]
		fmt.Fprintf(w, "pinned %q (%s %s): %d tools, %d prompts\n", name, u.Server.Name, u.Server.Version, len(u.Tools), len(u.Prompts))
	}
	fmt.Fprintln(w, "wrote", out)
	return nil
}

// CheckPins compares every upstream's listing with the pins file (file, or
// the one beside the config file) and writes the differences to w, per
// tool or prompt and field; it returns ErrPinsDiffer when there is any.
// An upstream pinned before prompts were (a pins file without them) has
// each of its prompts reported as added, as under block it is refused.
func CheckPins(ctx context.Context, l *configs.Loaded, file string, w io.Writer) error {
	if file == "" {
		file = configs.PinsFile(l.File)
	}
	pinned, err := pin.Read(file)
	if err != nil {
		return err
	}
	listed, err := listAll(ctx, l.Config)
	if err != nil {
		return err
	}
	differs := false
	for _, name := range slices.Sorted(maps.Keys(listed.Upstreams)) {
		p, ok := pinned.Upstreams[name]
		if !ok {
			fmt.Fprintf(w, "upstream %q: not pinned in %s\n", name, file)
			differs = true
			continue
		}
		c := append(pin.Compare(p, listed.Upstreams[name]), pin.ComparePrompts(p, listed.Upstreams[name])...)
		if len(c) > 0 {
			io.WriteString(w, pin.Format(name, c))
			differs = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pinned.Upstreams)) {
		if _, ok := listed.Upstreams[name]; !ok {
			fmt.Fprintf(w, "upstream %q: pinned but not configured\n", name)
			differs = true
		}
	}
	if differs {
		return ErrPinsDiffer
	}
	fmt.Fprintf(w, "the %d upstreams' tools and prompts are as pinned in %s\n", len(listed.Upstreams), file)
	return nil
}

// listAll connects to each upstream of cfg in turn and pins its listing.
func listAll(ctx context.Context, cfg configs.Config) (pin.File, error) {
	f := pin.File{Upstreams: map[string]pin.Upstream{}}
	log := NewLogger(cfg.Log.Level)
	sb := &upstreamSandbox{}
	for i, u := range cfg.Upstreams {
		opts, err := upstreamOptions(ctx, backendEnv{Config: cfg, Log: log}, i, u, sb)
		if err != nil {
			return pin.File{}, fmt.Errorf("upstream %q: %w (nothing was written: every upstream must answer)", u.Name, err)
		}
		conn, err := upstream.Connect(ctx, u, opts)
		if err != nil {
			return pin.File{}, fmt.Errorf("%w (nothing was written: every upstream must answer)", err)
		}
		l, err := withPrompts(ctx, conn, u)
		conn.Close()
		if err != nil {
			return pin.File{}, fmt.Errorf("upstream %q: %w (nothing was written: every upstream must answer)", u.Name, err)
		}
		f.Upstreams[u.Name] = l
	}
	return f, nil
}

// withPrompts is conn's listing with its prompts listed now and pinned.
func withPrompts(ctx context.Context, conn *upstream.Conn, u configs.Upstream) (pin.Upstream, error) {
	l := conn.Listing()
	ctx, cancel := context.WithTimeout(ctx, u.Timeout())
	defer cancel()
	_, pinned, err := conn.ListPrompts(ctx)
	if err != nil {
		return pin.Upstream{}, err
	}
	l.Prompts = pinned
	return l, nil
}
