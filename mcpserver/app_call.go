package mcpserver

import (
	"context"
	"encoding/json"
	"io"

	"github.com/toolwarden/toolwarden/configs"
)

// CallOnce makes one call of tool through the server, guard, limits and
// audit log that Serve would run, and writes the MCP result to w as
// indented JSON. trusted makes it an operator call (requires_trust tools
// run only this way). isError reports the result's isError, which the
// caller turns into its exit status.
func CallOnce(ctx context.Context, l *configs.Loaded, tool string, args json.RawMessage, trusted bool, w io.Writer) (isError bool, err error) {
	b, _, closeAll, err := openServer(ctx, oneShot(l.Config), NewLogger(l.Config.Log.Level))
	if err != nil {
		return false, err
	}
	defer closeAll()
	res, err := b.Call(ctx, tool, args, trusted)
	if err != nil {
		return false, err
	}
	if err := writeJSON(w, res); err != nil {
		return false, err
	}
	return res.IsError, nil
}

// writeJSON writes v to w as JSON indented by two spaces.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
