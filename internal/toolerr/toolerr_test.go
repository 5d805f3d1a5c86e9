package toolerr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func TestAs(t *testing.T) {
	coded := toolerr.New(toolerr.NotFound, "", "gone")
	for _, tt := range []struct {
		err  error
		code toolerr.Code
	}{
		{coded, toolerr.NotFound},
		{fmt.Errorf("wrapped: %w", coded), toolerr.NotFound},
		{context.DeadlineExceeded, toolerr.Timeout},
		{fmt.Errorf("query: %w", context.Canceled), toolerr.Canceled},
		{errors.New("disk on fire"), toolerr.Internal},
	} {
		e := toolerr.As(tt.err)
		require.Equal(t, tt.code, e.Code, "%v", tt.err)
		require.NotContains(t, e.Message, "disk on fire", "no internal detail reaches the model")
	}
}
