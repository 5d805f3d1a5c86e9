// Package pin records the tool and prompt definitions of upstream MCP
// servers by digest, reads and writes the pins file
// (toolwarden.pins.json) and says, tool by tool (or prompt by prompt) and
// field by field, what changed since they were pinned.
//
// A tool's definition is the tool object exactly as the upstream listed
// it in tools/list (every field: name, title, description, inputSchema,
// outputSchema, annotations, _meta, and any other), with the upstream's
// server name and version. Its digest is SHA-256 over the RFC 8785
// canonical form (JCS) of {"server":{...},"tool":{...}}, so that key
// order and number spelling do not matter and everything else does. A
// prompt's is the prompt object of prompts/list as mcp-go decodes it
// (name, title, description, arguments with each one's name, title,
// description and required, icons, _meta), its digest taken over
// {"prompt":{...},"server":{...}}.
package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// FileName is the pins file's name, beside the config file.
const FileName = "toolwarden.pins.json"

// FormatVersion is the pins file's format.
const FormatVersion = 1

// Server is how an upstream introduced itself in initialize.
type Server struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Tool is one pinned tool definition.
type Tool struct {
	// Digest is "sha256:" and the hex SHA-256 of the canonical
	// {"server":..., "tool": Definition}.
	Digest string `json:"digest"`
	// Definition is the tool as the upstream listed it, canonical.
	Definition jsontext.Value `json:"definition"`
}

// Upstream is the pinned listing of one upstream.
type Upstream struct {
	Server Server          `json:"server"`
	Tools  map[string]Tool `json:"tools"`
	// Prompts are its prompts, pinned as its tools are (a Tool each: the
	// digest and the definition). Nil when they were never pinned: a
	// pins file written before prompts were, or a record of first use
	// taken before the prompts were listed.
	Prompts map[string]Tool `json:"prompts"`
}

// File is the pins file: every upstream's listing, by upstream name.
type File struct {
	Version   int                 `json:"version"`
	Upstreams map[string]Upstream `json:"upstreams"`
}

// Canonical returns raw in the RFC 8785 form. It refuses what JCS
// cannot hold: invalid JSON or UTF-8, and duplicate member names (which
// a reader could take either way).
func Canonical(raw []byte) (jsontext.Value, error) {
	v := jsontext.Value(append([]byte(nil), raw...))
	if err := v.Canonicalize(); err != nil {
		return nil, err
	}
	return v, nil
}

// Digest is the digest of tool (canonical) as listed by server.
func Digest(server Server, tool jsontext.Value) string {
	doc, _ := json.Marshal(struct {
		Server Server         `json:"server"`
		Tool   jsontext.Value `json:"tool"`
	}{server, tool})
	return digestOf(doc)
}

// PromptDigest is the digest of prompt (canonical) as listed by server:
// under its own member, so that no prompt shares a tool's digest.
func PromptDigest(server Server, prompt jsontext.Value) string {
	doc, _ := json.Marshal(struct {
		Prompt jsontext.Value `json:"prompt"`
		Server Server         `json:"server"`
	}{prompt, server})
	return digestOf(doc)
}

func digestOf(doc []byte) string {
	v := jsontext.Value(doc)
	// Server's strings and an already canonical tool: cannot fail.
	_ = v.Canonicalize()
	sum := sha256.Sum256(v)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Listing pins the raw tool objects an upstream listed, each by its name.
// A tool that is not a JSON object with a string name, or whose name is
// listed twice, makes the listing unpinnable: the error says which.
func Listing(server Server, raw []json.RawMessage) (Upstream, error) {
	u := Upstream{Server: server, Tools: make(map[string]Tool, len(raw))}
	for i, r := range raw {
		def, err := Canonical(r)
		if err != nil {
			return Upstream{}, fmt.Errorf("tools[%d]: not canonical JSON (RFC 8785): %w", i, err)
		}
		var head struct {
			Name *string `json:"name"`
		}
		if err := json.Unmarshal(def, &head); err != nil || head.Name == nil {
			return Upstream{}, fmt.Errorf("tools[%d]: not an object with a string name", i)
		}
		if _, dup := u.Tools[*head.Name]; dup {
			return Upstream{}, fmt.Errorf("tools[%d]: the name %q is listed twice", i, *head.Name)
		}
		u.Tools[*head.Name] = Tool{Digest: Digest(server, def), Definition: def}
	}
	return u, nil
}

// Prompts pins the raw prompt objects an upstream listed, each by its
// name, as Listing pins tools: every field as sent, those mcp-go's
// structs do not hold included. A prompt that is not a JSON object with a
// string name, or not canonical (a duplicate member name, invalid UTF-8),
// or a name listed twice makes the listing unpinnable.
func Prompts(server Server, raw []json.RawMessage) (map[string]Tool, error) {
	out := make(map[string]Tool, len(raw))
	for i, r := range raw {
		def, err := Canonical(r)
		if err != nil {
			return nil, fmt.Errorf("prompts[%d]: not canonical JSON (RFC 8785): %w", i, err)
		}
		var head struct {
			Name *string `json:"name"`
		}
		if err := json.Unmarshal(def, &head); err != nil || head.Name == nil {
			return nil, fmt.Errorf("prompts[%d]: not an object with a string name", i)
		}
		if _, dup := out[*head.Name]; dup {
			return nil, fmt.Errorf("prompts[%d]: the name %q is listed twice", i, *head.Name)
		}
		out[*head.Name] = Tool{Digest: PromptDigest(server, def), Definition: def}
	}
	return out, nil
}

// ErrTampered is the error of a pins file whose digest does not match
// the definition beside it.
var ErrTampered = errors.New("the digest does not match the definition: the file was edited by hand; run toolwarden pin again")
