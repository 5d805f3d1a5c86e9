package bridge

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

func TestFilterWireNamesAgree(t *testing.T) {
	require.Equal(t, outfilter.MetaKey, filterMetaKey)
	require.Equal(t, outfilter.WarningPrefix, filterWarningPrefix)
}
