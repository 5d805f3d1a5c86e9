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
	// Getenv reads the variables api_key_env and header_env[].env name.
	Getenv func(string) string
	// Secret reads a credential from the file or Vault secret
	// api_key_file/_vault or header_env[].file/vault names (the config's
	// SecretSources.Secret); nil reads files only.
	Secret func(context.Context, configs.SecretRef) (string, error)
}

// httpTool is one http tool and where its credentials come from: they
// are read for each call and dropped when it ends.
type httpTool struct {
	h       HTTP
	t       configs.DeclaredTool
	base    *url.URL
	headers http.Header
	secret  []secretHeader
	client  *http.Client
}

// secretHeader is a header that carries a credential: prefix + the
// secret ref names.
type secretHeader struct {
	name, prefix string
	ref          configs.SecretRef
}

// creds are one call's credentials: the headers, and every form of each
// secret that an answer could echo (scrub and cut remove them).
type creds struct {
	headers http.Header
	secrets []string
	longest int // the length of the longest of secrets
}

// MissingSecrets names the environment variables t needs that are unset
// (a file or Vault secret is read, and checked, at each call).
func (h HTTP) MissingSecrets(t configs.DeclaredTool) []string {
	var missing []string
	for _, sh := range h.prepare(t).secret {
		if r := sh.ref; r.File == "" && r.Vault == "" && h.Getenv(r.Env) == "" {
			missing = append(missing, r.Env)
		}
	}
	return missing
}

func (h HTTP) prepare(t configs.DeclaredTool) *httpTool {
	base, _ := url.Parse(t.BaseURL) // checked at load
	ht := &httpTool{h: h, t: t, base: base, headers: http.Header{}}
	if t.APIKeySet() {
		if t.APIKeyHeader == "" || strings.EqualFold(t.APIKeyHeader, "Authorization") {
			ht.secret = append(ht.secret, secretHeader{"Authorization", "Bearer ", t.APIKeyRef()})
		} else {
			ht.secret = append(ht.secret, secretHeader{t.APIKeyHeader, "", t.APIKeyRef()})
		}
	}
	for i, he := range t.HeaderEnv {
		ht.secret = append(ht.secret, secretHeader{he.Name, "", he.Ref(i)})
	}
	ht.headers.Set("User-Agent", "toolwarden")
	ht.client = newClient(base)
	return ht
}

// read reads one credential: "" when its variable is unset.
func (h HTTP) read(ctx context.Context, ref configs.SecretRef) (string, error) {
	if ref.File == "" && ref.Vault == "" {
		return h.Getenv(ref.Env), nil
	}
	if h.Secret == nil {
		return configs.SecretSources{}.Secret(ctx, ref)
	}
	return h.Secret(ctx, ref)
}

// credentials reads the call's credentials, refusing the call when one
// is unset or cannot be read. The error names the key, never a value or
// where the file or Vault secret is (the server's log has the cause).
func (ht *httpTool) credentials(ctx context.Context) (*creds, error) {
	c := &creds{headers: ht.headers.Clone()}
	for _, sh := range ht.secret {
		v, err := ht.h.read(ctx, sh.ref)
		if err != nil {
			return nil, toolerr.Wrap(err, toolerr.BackendUnavailable, "The operator must fix the tool's credential; the server's log says why.",
				"tool %s's credential (%s) could not be read", ht.t.Name, strings.TrimSuffix(sh.ref.Key, ".")).WithRule("tools." + ht.t.Name + ".credentials")
		}
		if v == "" {
			return nil, toolerr.New(toolerr.BackendUnavailable, "The operator must set the tool's credential in the server's environment.",
				"tool %s has no credential configured", ht.t.Name).WithRule("tools." + ht.t.Name + ".credentials")
		}
		c.headers.Set(sh.name, sh.prefix+v)
		// An endpoint may echo a secret escaped or encoded as well as raw.
		c.secrets = append(c.secrets, v, url.QueryEscape(v), base64.StdEncoding.EncodeToString([]byte(v)),
			base64.RawURLEncoding.EncodeToString([]byte(v)))
	}
	for _, sec := range c.secrets {
		c.longest = max(c.longest, len(sec))
	}
	return c, nil
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
	c, err := ht.credentials(ctx)
	if err != nil {
		return HTTPOut{}, err
	}
	timeout := ht.t.Timeout
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := ht.request(ctx, vals, c.headers)
	if err != nil {
		return HTTPOut{}, err
	}
	resp, err := ht.client.Do(req)
	if err != nil {
		return HTTPOut{}, ht.transportError(ctx, err, c)
	}
	defer resp.Body.Close()
	max := ht.t.MaxOutputBytes
	if max == 0 {
		max = DefaultHTTPMaxOutput
	}
	// Read past the cap by the longest secret, so that a secret the cut
	// would split is seen whole and cut off entirely.
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max+c.longest)+1))
	if err != nil {
		return HTTPOut{}, ht.transportError(ctx, err, c)
	}
	truncated := len(body) > max
	if truncated {
		body = body[:c.cut(body, max)]
	}
	text := c.scrub(strings.ToValidUTF8(string(body), "\uFFFD"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return HTTPOut{}, ht.statusError(resp, text)
	}
	return HTTPOut{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: text, Truncated: truncated}, nil
}

// request builds the request: params into the query or a JSON body.
func (ht *httpTool) request(ctx context.Context, vals map[string]value, headers http.Header) (*http.Request, error) {
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
	req.Header = headers.Clone()
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (ht *httpTool) transportError(ctx context.Context, err error, c *creds) error {
	rule := "tools." + ht.t.Name + ".base_url"
	switch {
	case errors.Is(err, errOtherHost):
		return toolerr.Wrap(err, toolerr.DeniedNotAllowed, "Only the declared endpoint is reachable; the answer cannot be followed elsewhere.",
			"the endpoint redirected to another host: %s", c.scrub(err.Error())).WithRule(rule + ".same_host")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolerr.Wrap(err, toolerr.Timeout, "Try again later or with a narrower request.", "the endpoint did not answer in time").WithRule("tools." + ht.t.Name + ".timeout")
	case ctx.Err() != nil:
		return toolerr.Wrap(err, toolerr.Canceled, "", "the request was cancelled")
	}
	return toolerr.Wrap(err, toolerr.BackendUnavailable, "The endpoint may be down; try again later.",
		"request to %s failed: %s", ht.base.Host, c.scrub(err.Error())).WithRule(rule)
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
func (c *creds) cut(body []byte, n int) int {
	for moved := true; moved; {
		moved = false
		for _, sec := range c.secrets {
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
func (c *creds) scrub(s string) string {
	for _, sec := range c.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}
