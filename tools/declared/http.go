package declared

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// Defaults of an http tool that sets no timeout or max_output_bytes.
const (
	DefaultHTTPTimeout   = 30 * time.Second
	DefaultHTTPMaxOutput = 256 << 10
	maxRedirects         = 5
	errorBodyBytes       = 512
	redacted             = "[REDACTED]"
)

// HTTPOut is what an http tool returns for a 2xx answer.
type HTTPOut struct {
	Status      int    `json:"status" jsonschema:"The HTTP status code (2xx)"`
	ContentType string `json:"content_type" jsonschema:"The response's Content-Type"`
	Body        string `json:"body" jsonschema:"The response body as text, cut at the tool's max_output_bytes"`
	Truncated   bool   `json:"truncated" jsonschema:"True when the body was cut at max_output_bytes"`
}

// HTTP builds declared http tools.
type HTTP struct {
	// Getenv reads the secrets named by api_key_env and header_env.
	Getenv func(string) string
}

// httpTool is one http tool with its secrets, read once at start.
type httpTool struct {
	t       configs.DeclaredTool
	base    *url.URL
	headers http.Header
	secrets []string
	longest int // the length of the longest of secrets
	missing []string
	client  *http.Client
}

// MissingSecrets names the environment variables t needs that are unset.
func (h HTTP) MissingSecrets(t configs.DeclaredTool) []string { return h.prepare(t).missing }

func (h HTTP) prepare(t configs.DeclaredTool) *httpTool {
	base, _ := url.Parse(t.BaseURL) // checked at load
	ht := &httpTool{t: t, base: base, headers: http.Header{}}
	set := func(header, env, prefix string) {
		v := h.Getenv(env)
		if v == "" {
			ht.missing = append(ht.missing, env)
			return
		}
		ht.headers.Set(header, prefix+v)
		// An endpoint may echo a secret escaped or encoded as well as raw.
		ht.secrets = append(ht.secrets, v, url.QueryEscape(v), base64.StdEncoding.EncodeToString([]byte(v)),
			base64.RawURLEncoding.EncodeToString([]byte(v)))
		for _, sec := range ht.secrets {
			ht.longest = max(ht.longest, len(sec))
		}
	}
	if t.APIKeyEnv != "" {
		if t.APIKeyHeader == "" || strings.EqualFold(t.APIKeyHeader, "Authorization") {
			set("Authorization", t.APIKeyEnv, "Bearer ")
		} else {
			set(t.APIKeyHeader, t.APIKeyEnv, "")
		}
	}
	for _, he := range t.HeaderEnv {
		set(he.Name, he.Env, "")
	}
	ht.headers.Set("User-Agent", "toolwarden")
	ht.client = newClient(base)
	return ht
}

// errOtherHost refuses a redirect away from the declared endpoint.
var errOtherHost = errors.New("redirect to another host refused")

// newClient is a client that reaches only base's scheme and host: no proxy
// from the environment, no redirect elsewhere.
func newClient(base *url.URL) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != base.Scheme || hostPort(req.URL.String()) != hostPort(base.String()) {
				return fmt.Errorf("%w: %s", errOtherHost, req.URL.Host)
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			return nil
		},
	}
}

// Tool builds the http tool t.
func (h HTTP) Tool(t configs.DeclaredTool) tools.Tool {
	ht := h.prepare(t)
	chk := newChecker(t, nil)
	side := fmt.Sprintf("sends one %s request to %s (the server adds any credentials; you never see them); no other host is reachable.", t.Method, t.BaseURL)
	tool := build(t, "status, content_type, body (cut at the tool's output cap) and truncated. A non-2xx answer is an upstream.status error with the start of its body.", side,
		func(ctx context.Context, args map[string]any) (HTTPOut, error) {
			vals, err := chk.values(args)
			if err != nil {
				return HTTPOut{}, err
			}
			return ht.call(ctx, vals)
		})
	return tools.WithPreview(tool, tools.PreviewOf(func(ctx context.Context, args map[string]any) (string, error) {
		vals, err := chk.values(args)
		if err != nil {
			return "", err
		}
		return ht.preview(ctx, vals)
	}))
}

func (ht *httpTool) call(ctx context.Context, vals map[string]value) (HTTPOut, error) {
	if err := ht.credentials(); err != nil {
		return HTTPOut{}, err
	}
	timeout := ht.t.Timeout
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := ht.request(ctx, vals)
	if err != nil {
		return HTTPOut{}, err
	}
	resp, err := ht.client.Do(req)
	if err != nil {
		return HTTPOut{}, ht.transportError(ctx, err)
	}
	defer resp.Body.Close()
	max := ht.t.MaxOutputBytes
	if max == 0 {
		max = DefaultHTTPMaxOutput
	}
	// Read past the cap by the longest secret, so that a secret the cut
	// would split is seen whole and cut off entirely.
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max+ht.longest)+1))
	if err != nil {
		return HTTPOut{}, ht.transportError(ctx, err)
	}
	truncated := len(body) > max
	if truncated {
		body = body[:ht.cut(body, max)]
	}
	text := ht.scrub(strings.ToValidUTF8(string(body), "\uFFFD"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return HTTPOut{}, ht.statusError(resp, text)
	}
	return HTTPOut{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: text, Truncated: truncated}, nil
}

// credentials refuses a call when a secret the tool sends is unset.
func (ht *httpTool) credentials() error {
	if len(ht.missing) > 0 {
		return toolerr.New(toolerr.BackendUnavailable, "The operator must set the tool's credential in the server's environment.",
			"tool %s has no credential configured", ht.t.Name).WithRule("tools." + ht.t.Name + ".credentials")
	}
	return nil
}

// request builds the request: params into the query or a JSON body.
func (ht *httpTool) request(ctx context.Context, vals map[string]value) (*http.Request, error) {
	u := *ht.base
	q := u.Query()
	body := map[string]any{}
	for _, p := range ht.t.Params {
		v, ok := vals[p.Name]
		if !ok {
			continue
		}
		if ht.t.ParamIn(p) == "body" {
			body[p.Name] = v.JSON
		} else {
			q.Set(p.Name, v.Text)
		}
	}
	u.RawQuery = q.Encode()
	var rd io.Reader
	if ht.t.Method != http.MethodGet && ht.t.Method != http.MethodDelete {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, toolerr.Wrap(err, toolerr.Internal, "", "request body does not encode")
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, ht.t.Method, u.String(), rd)
	if err != nil {
		return nil, toolerr.Wrap(err, toolerr.Internal, "", "request does not build")
	}
	req.Header = ht.headers.Clone()
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (ht *httpTool) transportError(ctx context.Context, err error) error {
	rule := "tools." + ht.t.Name + ".base_url"
	switch {
	case errors.Is(err, errOtherHost):
		return toolerr.Wrap(err, toolerr.DeniedNotAllowed, "Only the declared endpoint is reachable; the answer cannot be followed elsewhere.",
			"the endpoint redirected to another host: %s", ht.scrub(err.Error())).WithRule(rule + ".same_host")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolerr.Wrap(err, toolerr.Timeout, "Try again later or with a narrower request.", "the endpoint did not answer in time").WithRule("tools." + ht.t.Name + ".timeout")
	case ctx.Err() != nil:
		return toolerr.Wrap(err, toolerr.Canceled, "", "the request was cancelled")
	}
	return toolerr.Wrap(err, toolerr.BackendUnavailable, "The endpoint may be down; try again later.",
		"request to %s failed: %s", ht.base.Host, ht.scrub(err.Error())).WithRule(rule)
}

func (ht *httpTool) statusError(resp *http.Response, body string) error {
	hint := "Check the arguments against the tool's description."
	if resp.StatusCode >= 500 {
		hint = "The endpoint failed; try again later."
	}
	if len(body) > errorBodyBytes {
		body = strings.ToValidUTF8(body[:errorBodyBytes], "") + "…"
	}
	return toolerr.New(toolerr.UpstreamStatus, hint, "the endpoint answered %s: %s", resp.Status, body).WithRule("tools." + ht.t.Name + ".status")
}

// cut is where to cut body to at most n bytes: n, or before any secret
// that n would split (scrub could not recognise the part left, and the
// model could place the cut with a padded, echoed parameter).
func (ht *httpTool) cut(body []byte, n int) int {
	for moved := true; moved; {
		moved = false
		for _, sec := range ht.secrets {
			lo, hi := max(n-len(sec)+1, 0), min(n+len(sec)-1, len(body))
			if i := bytes.Index(body[lo:hi], []byte(sec)); i >= 0 && lo+i < n {
				n, moved = lo+i, true
			}
		}
	}
	return n
}

// scrub removes the tool's secrets from text that may reach the model: an
// endpoint or an error message could echo them.
func (ht *httpTool) scrub(s string) string {
	for _, sec := range ht.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}
