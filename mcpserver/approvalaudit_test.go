package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
)

// verifiedEntries reads every line of the audit file, after checking
// that its hash chain still verifies.
func verifiedEntries(t *testing.T, path string) []audit.Entry {
	t.Helper()
	_, err := audit.VerifyFiles([]string{path})
	require.NoError(t, err, "the audit chain verifies")
	return audittest.Entries(t, path)
}

// approvalLines are the audit lines of tool as outcome:approval.
func approvalLines(entries []audit.Entry, tool string) []string {
	var out []string
	for _, e := range entries {
		if e.Tool == tool && e.Outcome != guard.Allow {
			out = append(out, string(e.Outcome)+":"+e.Approval)
		}
	}
	return out
}

// TestOneNeedsApprovalLinePerApproval: an approved call writes one
// needs_approval line whatever the protocol; under 2026-07-28 the retry
// that brings the answer writes none, and its approved and completed
// lines name the approval request they answer.
func TestOneNeedsApprovalLinePerApproval(t *testing.T) {
	for _, kind := range clientKinds {
		t.Run(kind.name, func(t *testing.T) {
			f := newFixture(t)
			withApproval(f, time.Minute)
			c := kind.open(t, f.server(t), client.WithElicitationHandler(&human{answer: accept(false)}))
			require.False(t, callTool(t, c, "write_file", writeArgs("one")).IsError)
			require.False(t, callTool(t, c, "write_file", writeArgs("two")).IsError)

			lines := approvalLines(verifiedEntries(t, f.auditPath), "write_file")
			require.Len(t, lines, 6, "%v", lines)
			for i := 0; i < 6; i += 3 {
				id := strings.TrimPrefix(lines[i], "needs_approval:")
				require.Len(t, id, 16, "the needs_approval line names its request: %v", lines)
				require.Equal(t, []string{"needs_approval:" + id, "approved:" + id, "completed:" + id}, lines[i:i+3])
			}
			require.NotEqual(t, lines[0], lines[3], "each approval asked is a request of its own")
		})
	}
}

// TestApprovalRetryAudit: the 2026-07-28 retry is told from a new request
// in the audit log: it names the request it answers, also when its answer
// came too late, and a request without a valid state is a new one.
func TestApprovalRetryAudit(t *testing.T) {
	f := newFixture(t)
	withApproval(f, 500*time.Millisecond)
	b := f.server(t)
	args := writeArgs("late")

	asked := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{})
	require.True(t, asked.NeedsInput())
	forged := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{RequestState: "forged." + asked.RequestState, InputResponses: accepted()})
	require.True(t, forged.NeedsInput())
	time.Sleep(600 * time.Millisecond) // past approval.timeout
	late := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{RequestState: asked.RequestState, InputResponses: accepted()})
	require.True(t, late.IsError)

	lines := approvalLines(verifiedEntries(t, f.auditPath), "write_file")
	require.Len(t, lines, 3, "%v", lines)
	first, second := strings.TrimPrefix(lines[0], "needs_approval:"), strings.TrimPrefix(lines[1], "needs_approval:")
	require.NotEqual(t, first, second, "a forged state asks anew, under a new request: %v", lines)
	require.Equal(t, "declined:"+first, lines[2], "the late retry names the request it answers and is not asked again")
}
