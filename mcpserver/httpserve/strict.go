package httpserve

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/toolwarden/toolwarden/internal/jsonrpcstrict"
)

// strictJSONRPC refuses a POST whose body is not one strict JSON-RPC
// message (jsonrpcstrict) with 400 and the JSON-RPC error as the body,
// before mcp-go's lenient decoder reads it. The body has already been
// bounded by capBody.
func strictJSONRPC(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, "request body too large (http.max_body_bytes)", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "could not read the request body", http.StatusBadRequest)
			return
		}
		msg, err := jsonrpcstrict.Check(body)
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(err.(*jsonrpcstrict.Error).Response())
			return
		}
		r.Body = &checkedBody{Reader: bytes.NewReader(body), msg: msg}
		next.ServeHTTP(w, r)
	})
}

// checkedBody is a POST body strictJSONRPC has checked, with what the
// check learnt of it, so that the handlers behind need not read and
// decode it again to tell what it is (see needsSession).
type checkedBody struct {
	*bytes.Reader
	msg jsonrpcstrict.Message
}

func (*checkedBody) Close() error { return nil }
