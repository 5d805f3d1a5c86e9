package bridge

// What a toolwarden server's output filter adds to a result, as the wire
// shows it: the bridge is a client and reads these without importing the
// server's filter (and its secret rule set). A test checks they agree
// with guard/outfilter's MetaKey and WarningPrefix.
const (
	filterMetaKey       = "io.toolwarden/output"
	filterWarningPrefix = "[toolwarden warning] "
)
