package httpserve

import (
	"context"
	"net/http"

	"github.com/toolwarden/toolwarden/internal/jsonrpcstrict"
)

// Tasks answers MCP task requests (a tools/call with a task request,
// tasks/get, tasks/result, tasks/list, tasks/cancel) in place of mcp-go,
// whose own task handlers keep tasks per session in one process's
// memory. The server behind answers the task's call itself, through
// mcp-go's HandleMessage and so the guard.
type Tasks interface {
	// Claims reports whether a request of method with params is one.
	Claims(method string, params []byte) bool
	// Answer serves the request msg, authenticated as ctx says, and
	// returns its JSON-RPC answer.
	Answer(ctx context.Context, msg []byte) []byte
}

// answerTasks answers a POST that holds a task request with its JSON
// answer; any other goes on to next. It stands behind the session check,
// so a session is used only by its owner; a task itself belongs to the
// identity, not the session, and outlives it.
func answerTasks(tasks Tasks, next http.Handler) http.Handler {
	if tasks == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := r.Body.(*checkedBody)
		if r.Method != http.MethodPost || !ok || body.msg.Kind != jsonrpcstrict.Request || !tasks.Claims(body.msg.Method, body.msg.Params) {
			next.ServeHTTP(w, r)
			return
		}
		msg := make([]byte, body.Size())
		if _, err := body.ReadAt(msg, 0); err != nil {
			http.Error(w, "could not read the request body", http.StatusBadRequest)
			return
		}
		answer := tasks.Answer(r.Context(), msg)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
}
