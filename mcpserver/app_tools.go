package mcpserver

import (
	"context"
	"fmt"
	"io"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
)

// PrintTools writes to w, as indented JSON, exactly the tools a model
// sees under l's config, and the digest of that surface to errOut (so
// that w holds only the list).
func PrintTools(ctx context.Context, l *configs.Loaded, w, errOut io.Writer) error {
	b, err := Build(withProbe(ctx, probeCached), oneShot(l.Config), audit.Discard{}, buildInfo.Version, NewLogger(l.Config.Log.Level))
	if err != nil {
		return err
	}
	defer b.Close()
	list, err := b.ListTools(ctx)
	if err != nil {
		return err
	}
	if digest, err := ToolsDigest(list); err == nil {
		fmt.Fprintln(errOut, "tools_sha256:", digest)
	}
	return writeJSON(w, list)
}
