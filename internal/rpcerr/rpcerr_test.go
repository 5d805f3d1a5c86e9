package rpcerr

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnswerNeedsASlot(t *testing.T) {
	assert.False(t, Answer(context.Background(), Invalid("r", "bad")), "no transport offered a slot")
	ctx, got := WithSlot(context.Background())
	assert.Nil(t, got())
	first, second := MissingCapability("sampling"), Invalid("r", "bad")
	assert.True(t, Answer(ctx, first))
	assert.False(t, Answer(ctx, second), "the first error stays")
	assert.False(t, Answer(ctx, nil))
	assert.Same(t, first, got())
}

func TestMissingCapabilityData(t *testing.T) {
	e := MissingCapability("sampling")
	assert.Equal(t, -32021, e.Code)
	b, err := json.Marshal(e.Data)
	require.NoError(t, err)
	assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(b))
	assert.Contains(t, e.Message, "sampling")
}

func TestInvalidNamesTheRule(t *testing.T) {
	e := Invalid("mrtr.request_state", "requestState failed its integrity check")
	assert.Equal(t, -32602, e.Code)
	assert.Contains(t, e.Error(), "mrtr.request_state")
}
