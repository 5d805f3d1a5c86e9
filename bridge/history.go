package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/genai"
)

// History is the ordered conversation in Gemini's format.
type History struct {
	Contents []*genai.Content `json:"contents"`
	// tokens caches each content's estimate; contents are not changed
	// once added.
	tokens map[*genai.Content]int
}

// Add appends contents.
func (h *History) Add(c ...*genai.Content) { h.Contents = append(h.Contents, c...) }

// Reset forgets the conversation.
func (h *History) Reset() { h.Contents, h.tokens = nil, nil }

// EstimateTokens approximates the tokens of contents at four bytes of JSON
// per token: a budget check, not a bill, and it costs no API call.
func EstimateTokens(contents []*genai.Content) int {
	n := 0
	for _, c := range contents {
		b, _ := json.Marshal(c)
		n += (len(b) + 3) / 4
	}
	return n
}

// estimate is EstimateTokens, cached per content.
func (h *History) estimate(contents []*genai.Content) int {
	if h.tokens == nil {
		h.tokens = map[*genai.Content]int{}
	}
	n := 0
	for _, c := range contents {
		t, ok := h.tokens[c]
		if !ok {
			t = EstimateTokens([]*genai.Content{c})
			h.tokens[c] = t
		}
		n += t
	}
	return n
}

// Fit returns the contents to send under a budget of maxTokens (0: no
// budget). It drops the oldest exchanges first but always keeps the first
// user message and the last unit, and never separates a model turn that
// calls functions from the turn that answers them. When it drops anything,
// a short model note says so, which also keeps user and model turns
// alternating. dropped is the number of contents left out.
func (h *History) Fit(maxTokens int) (contents []*genai.Content, dropped int) {
	all := h.Contents
	if maxTokens <= 0 || len(all) < 3 || h.estimate(all) <= maxTokens {
		return all, 0
	}
	units := splitUnits(all[1:])
	budget := maxTokens - h.estimate(all[:1]) - EstimateTokens([]*genai.Content{truncationNote(0)})
	// Keep units from the newest back while they fit; the newest always.
	keepFrom := len(units) - 1
	used := h.estimate(units[keepFrom])
	for keepFrom > 0 && used+h.estimate(units[keepFrom-1]) <= budget {
		keepFrom--
		used += h.estimate(units[keepFrom])
	}
	contents = []*genai.Content{all[0]}
	for _, u := range units[:keepFrom] {
		dropped += len(u)
	}
	if dropped > 0 && (len(units[keepFrom]) == 0 || units[keepFrom][0].Role != genai.RoleModel) {
		contents = append(contents, truncationNote(dropped))
	}
	for _, u := range units[keepFrom:] {
		contents = append(contents, u...)
	}
	return contents, dropped
}

func truncationNote(n int) *genai.Content {
	return genai.NewContentFromText(fmt.Sprintf("[%d earlier messages were left out to fit the context budget]", n), genai.RoleModel)
}

// splitUnits groups contents so that a turn with function calls and the
// turn with their responses stay together, and so do, in the json-block
// protocol, a model turn with blocks and the user turn with their results.
func splitUnits(contents []*genai.Content) [][]*genai.Content {
	var units [][]*genai.Content
	for i := 0; i < len(contents); i++ {
		c := contents[i]
		if i+1 < len(contents) && (hasFunctionCalls(c) && hasFunctionResponses(contents[i+1]) ||
			c.Role == genai.RoleModel && hasResultBlocks(contents[i+1])) {
			units = append(units, contents[i:i+2])
			i++
			continue
		}
		units = append(units, contents[i:i+1])
	}
	return units
}

func hasFunctionCalls(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			return true
		}
	}
	return false
}

// hasResultBlocks reports whether c is the bridge's answer to json blocks.
func hasResultBlocks(c *genai.Content) bool {
	return c.Role == genai.RoleUser && strings.HasPrefix(text(c), "```json-result\n")
}

func hasFunctionResponses(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// sessionFile is the JSON a --session file holds.
type sessionFile struct {
	Version  int              `json:"version"`
	Contents []*genai.Content `json:"contents"`
}

const sessionVersion = 1

// Save writes the history to path atomically (temporary file in the same
// directory, fsync, rename), readable by the owner only: it may hold file
// contents the tools returned.
func (h *History) Save(path string) error {
	b, err := json.MarshalIndent(sessionFile{Version: sessionVersion, Contents: h.Contents}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("saving session: %w", err)
	}
	defer os.Remove(f.Name()) // no-op after the rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("saving session: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("saving session: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving session: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("saving session: %w", err)
	}
	return nil
}

// LoadHistory reads a session file; a missing file is an empty history.
func LoadHistory(path string) (*History, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &History{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading session: %w", err)
	}
	var s sessionFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("loading session %s: %w", path, err)
	}
	if s.Version != sessionVersion {
		return nil, fmt.Errorf("loading session %s: version %d, this bridge reads version %d", path, s.Version, sessionVersion)
	}
	for i, c := range s.Contents {
		if c == nil || (c.Role != genai.RoleUser && c.Role != genai.RoleModel) {
			return nil, fmt.Errorf("loading session %s: message %d has no user or model role", path, i)
		}
		if err := checkTurn(s.Contents, i); err != nil {
			return nil, fmt.Errorf("loading session %s: message %d: %w", path, i, err)
		}
	}
	return &History{Contents: s.Contents}, nil
}

// checkTurn checks content i of a loaded session against what the bridge
// writes, so that a session file cannot bring in what no model or tool
// said: a user turn holds text or the responses to the calls of the model
// turn just before it (same tools, same IDs, in order), and every call is
// answered that way; nothing else, such as file data the API would fetch.
func checkTurn(contents []*genai.Content, i int) error {
	c := contents[i]
	for _, p := range c.Parts {
		switch {
		case p == nil:
			return errors.New("an empty part")
		case p.FunctionResponse != nil && c.Role != genai.RoleUser:
			return errors.New("a function response in a model turn")
		case p.FunctionCall != nil && c.Role != genai.RoleModel:
			return errors.New("a function call in a user turn")
		case p.FileData != nil || p.InlineData != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil:
			return errors.New("content of a kind the bridge does not write")
		case c.Role == genai.RoleUser && p.Text == "" && p.FunctionResponse == nil:
			return errors.New("a user part with neither text nor a function response")
		}
	}
	var calls, resps []*genai.Part
	if hasFunctionCalls(c) {
		if i+1 == len(contents) || !hasFunctionResponses(contents[i+1]) {
			return errors.New("function calls without their responses")
		}
	}
	if !hasFunctionResponses(c) {
		return nil
	}
	if i == 0 {
		return errors.New("function responses with no calls before them")
	}
	for _, p := range contents[i-1].Parts {
		if p.FunctionCall != nil {
			calls = append(calls, p)
		}
	}
	for _, p := range c.Parts {
		if p.FunctionResponse == nil {
			return errors.New("function responses mixed with other content")
		}
		resps = append(resps, p)
	}
	if len(calls) != len(resps) {
		return fmt.Errorf("%d function responses to %d calls", len(resps), len(calls))
	}
	for k, r := range resps {
		call, resp := calls[k].FunctionCall, r.FunctionResponse
		if call.Name != resp.Name || call.ID != resp.ID {
			return fmt.Errorf("response %d (%s %q) does not answer call %d (%s %q)", k+1, resp.Name, resp.ID, k+1, call.Name, call.ID)
		}
	}
	return nil
}
